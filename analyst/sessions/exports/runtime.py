"""What the sandbox's template gives every cell, which an export must give its code elsewhere: the
names a kernel starts with (the top-level imports of the template's startup.py, read from that
file: one list, which the kernel runs and the exports copy) and the package versions it pins
(its requirements.txt and wheelhouse.txt), from which an export's requirements.txt is made.

The template's files are read as the data of the SDK's package (`sandboxes`), never imported.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable
from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable

TEMPLATE = "code-interpreter"  # the SDK's default template, which every session's kernel runs
# Import names whose package is named otherwise on PyPI (the others: the same name, normalised).
PACKAGE_OF_MODULE = {
    "sklearn": "scikit-learn",
    "janitor": "pyjanitor",
    "mpl_toolkits": "matplotlib",
    "PIL": "pillow",
    "yaml": "pyyaml",
    "dateutil": "python-dateutil",
    "bs4": "beautifulsoup4",
}
# What pandas needs, unimported, to read a file of this kind (pd.read_excel, pd.read_parquet...).
READER_OF_SUFFIX = {
    ".xlsx": "openpyxl",
    ".xlsm": "openpyxl",
    ".xls": "xlrd",
    ".xlsb": "pyxlsb",
    ".parquet": "pyarrow",
    ".feather": "pyarrow",
    ".arrow": "pyarrow",
}
PIN = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([^\s#;]+)")
STANDARD = frozenset(sys.stdlib_module_names) | {"__future__"}


def _template_file(name: str) -> Traversable:
    return files("sandboxes") / "templates" / TEMPLATE / name


@cache
def implicit_imports() -> tuple[str, ...]:
    """The import statements the kernel's startup file runs at its top level, as written there
    (``import pandas as pd``...): the names every cell finds bound without importing them."""
    source = _template_file("startup.py").read_text()
    statements = ast.parse(source).body
    found = [node for node in statements if isinstance(node, ast.Import | ast.ImportFrom)]
    return tuple(ast.get_source_segment(source, node) or "" for node in found)


@cache
def pinned_packages() -> dict[str, str]:
    """Normalised package name → its pin in the template (``pandas==3.1.1``), installed ones and
    those `%pip install` offers alike."""
    pins: dict[str, str] = {}
    for listed in ("wheelhouse.txt", "requirements.txt"):  # the template's own last: it wins
        file = _template_file(listed)
        lines = file.read_text().splitlines() if file.is_file() else []
        for match in filter(None, map(PIN.match, lines)):
            pins[_normalised(match[1])] = f"{match[1]}=={match[2]}"
    return pins


def requirements(sources: Iterable[str], data_paths: Iterable[str]) -> str:
    """A requirements.txt for code made of ``sources`` (after the implicit imports) reading the
    files at ``data_paths``: each package it imports, pinned as in the template; a module the
    template does not have is named in a comment, for the reader to resolve."""
    modules = [*_imported(implicit_imports()), *_imported(sources)]
    wanted = [PACKAGE_OF_MODULE.get(module, module) for module in modules if module not in STANDARD]
    wanted += [READER_OF_SUFFIX[suffix] for suffix in map(_suffix, data_paths) if suffix in READER_OF_SUFFIX]
    pins, lines, unknown = pinned_packages(), [], []
    for package in dict.fromkeys(wanted):
        pin = pins.get(_normalised(package))
        if pin is None:
            unknown.append(package)
        elif pin not in lines:
            lines.append(pin)
    head = "# The packages this analysis imports, at the versions its sandbox ran."
    tail = [f"# Not in the sandbox's template (a module of its own?): {name}" for name in unknown]
    return "\n".join([head, *lines, *tail]) + "\n"


def _imported(sources: Iterable[str]) -> list[str]:
    """The top-level modules ``sources`` import, in order of first import; a source that is not
    Python (IPython's `%` and `!` lines aside) adds none."""
    found: list[str] = []
    for source in sources:
        lines = source.splitlines()
        python = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in lines)
        try:
            tree = ast.parse(python)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found += [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.append(node.module.split(".")[0])
    return list(dict.fromkeys(found))


def _normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _suffix(path: str) -> str:
    name = path.rsplit("/", 1)[-1].lower()
    return name[name.rfind(".") :] if "." in name else ""
