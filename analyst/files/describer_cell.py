"""The describer as one cell for a kernel: analyst/files/inside_sandbox/describe.py and the modules
it imports, made a private package there by the cell's loader (inside_sandbox/loader.py). Plain
Python, no Django: the benchmarks build the same cell as the worker."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

INSIDE_SANDBOX = Path(__file__).resolve().parent / "inside_sandbox"
DESCRIBER = "describe"  # the module whose main the cell binds
PACKAGE = "_analyst_describe"  # the describer's modules, in the kernel: a name no user's code has


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
