"""The describer's modules run in the user's kernel: they import only the stdlib, the sandbox
template's packages and one another, and every one of them is in the cell."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from analyst.files.describer_cell import INSIDE_SANDBOX, describer_modules

REQUIREMENTS = (
    Path(__file__).resolve().parents[3] / "sandboxes" / "templates" / "code-interpreter" / "requirements.txt"
)


def template_packages() -> set[str]:
    lines = (line.split("#")[0].strip() for line in REQUIREMENTS.read_text().splitlines())
    return {line.split("==")[0].replace("-", "_").lower() for line in lines if line}


def test_they_import_only_the_stdlib_the_templates_packages_and_one_another():
    allowed = set(sys.stdlib_module_names) | template_packages()
    for name, source in describer_modules().items():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                imported = {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level:
                imported = {node.module or ""}
            else:
                continue
            bad = {module for module in imported if module.split(".")[0] not in allowed}
            assert not bad, f"{name}.py imports {bad}, which the sandbox does not have"


def test_every_module_beside_describe_is_in_the_cell():
    modules = {path.stem for path in INSIDE_SANDBOX.glob("*.py")} - {"__init__", "loader"}
    assert set(describer_modules()) == modules
    assert list(describer_modules())[-1] == "describe"
