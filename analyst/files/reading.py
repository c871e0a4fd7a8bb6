"""Reading an upload inside its sandbox: the describer (analyst/files/inside_sandbox/: describe.py
and the modules it imports) sent as one cell and run in a code context of its own, its report
checked before anything of ours uses it."""

from __future__ import annotations

import ast
import json
from functools import cache
from pathlib import Path
from typing import Any

from django.conf import settings

from analyst.files import reports as file_reports
from analyst.models import DataFile
from sandboxes import Sandbox

INSIDE_SANDBOX = Path(__file__).resolve().parent / "inside_sandbox"
DESCRIBER = "describe"  # the module whose main the cell binds
PACKAGE = "_analyst_describe"  # the describer's modules, in the kernel: a name no user's code has
DESCRIBE_TIMEOUT = 120


@cache
def describer_source() -> str:
    """The describer as one cell: inside_sandbox/loader.py, which makes describe.py and the
    modules it imports a package (PACKAGE) in the kernel; then ``main`` taken from it. The cell
    binds ``main`` and ``json`` (which the caller's ``main(json.loads(...))`` uses), nothing else."""
    return (
        f"{(INSIDE_SANDBOX / 'loader.py').read_text()}\n"
        f"main = _load_package({PACKAGE!r}, {describer_modules()!r}).{DESCRIBER}.main\n"
        "del _load_package\n"
        "import json\n"
    )


def describer_modules() -> dict[str, str]:
    """DESCRIBER and the modules of inside_sandbox it imports, through one another, as name:
    source, each after those it imports."""
    ordered: dict[str, str] = {}
    entered: set[str] = set()

    def add(name: str) -> None:
        if name in ordered:
            return
        if name in entered:
            raise ImportError(f"the describer's modules import one another in a circle, through {name}")
        entered.add(name)
        source = (INSIDE_SANDBOX / f"{name}.py").read_text()
        for imported in sibling_imports(source):
            add(imported)
        ordered[name] = source

    add(DESCRIBER)
    return ordered


def sibling_imports(source: str) -> list[str]:
    """The modules beside it that ``source`` imports, all as ``from .module import name``."""
    names = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level:
            if node.level != 1 or not node.module or "." in node.module:
                raise ImportError(
                    "the describer's modules import one another as `from .module import name`, "
                    f"not `{ast.unparse(node)}`"
                )
            names.append(node.module)
    return names


def describe_in(sandbox: Sandbox, data_file: DataFile) -> dict[str, Any]:
    """What the describer finds in ``data_file`` (already in the sandbox), checked; a zip is
    unpacked beside itself as it goes. Runs in a context of its own: a running turn keeps the
    default one busy, and a file that crashes its reader takes no one's variables with it."""
    request = {
        "path": data_file.path,
        "options": data_file.read_options,
        "limits": settings.ANALYST_READING_LIMITS,
    }
    code = f"{describer_source()}\nimport json\nmain(json.loads({json.dumps(json.dumps(request))}))\n"
    context = sandbox.create_code_context()
    try:
        execution = context.run_code(code, timeout=DESCRIBE_TIMEOUT)
    finally:
        context.close()
    if execution.error is not None and not execution.stdout.strip():
        return file_reports.failed(
            f"its reader stopped: {execution.error.name}: {execution.error.value}"[:500]
        )
    return file_reports.checked(execution.stdout)


def is_packed(data_file: DataFile) -> bool:
    """A zip: its files are unpacked in the sandbox (beside it) by the describer."""
    return data_file.name.lower().endswith(".zip")
