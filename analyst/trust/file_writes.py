"""Which lines of a cell write files, read from its syntax tree (never run): what the "writes"
approval mode (analyst.trust.approvals) makes wait.

A careful reading of the usual ways, not a sandbox: code that hides what it calls (a method
looked up by name, a Path's ``rename`` held in a variable) gets past it, and the kernel's own
isolation is what bounds such a cell. What it cannot read, it counts as writing: code Python
cannot parse (IPython magics such as ``%%writefile``, shell escapes), ``exec``/``eval``, shell
commands, and an ``open`` whose mode is not a constant.

A connection (docs/connections.md) writes only where it is not read-only: a cell that uses one of
those (``connection("name")``, ``sql("name", …)``, a ``%%sql name`` cell; a name the reading cannot
know counts as such) waits too. A ``%%sql`` cell on a read-only connection only reads; one over the
uploads (no name) writes a file only through DuckDB's COPY or EXPORT.
"""

from __future__ import annotations

import ast
import re

# Modules the kernel imports for every cell, under the names it binds them to.
PREIMPORTED = {"np": "numpy", "pd": "pandas", "plt": "matplotlib.pyplot"}

# Functions that write, remove or move files, or run code this reading cannot see into.
WRITING_FUNCTIONS = frozenset(
    {
        *(
            f"os.{name}"
            for name in (
                "remove unlink rmdir removedirs rename renames replace mkdir makedirs truncate"
                " ftruncate symlink link chmod chown utime write system popen"
                " execv execve execvp spawnv spawnl"
            ).split()
        ),
        *(
            f"shutil.{name}"
            for name in (
                "copy copy2 copyfile copytree copymode copystat move rmtree make_archive unpack_archive chown"
            ).split()
        ),
        *(f"subprocess.{name}" for name in "run call check_call check_output Popen getoutput".split()),
        *(f"numpy.{name}" for name in "save savez savez_compressed savetxt".split()),
        "joblib.dump",
        "pandas.ExcelWriter",
        "pandas.HDFStore",
        "sqlite3.connect",  # a database file opened for writing as much as for reading
        "zipfile.ZipFile",  # with a mode: see MODE_AT
        "importlib.import_module",
        "exec",
        "eval",
        "compile",
        "__import__",
    }
)
# Functions that write only in a mode that says so, and where that mode is passed.
MODE_AT = {"open": 1, "io.open": 1, "codecs.open": 1, "zipfile.ZipFile": 1}
# Methods that write whatever their receiver is (a figure, a frame, an array, a Path).
WRITING_METHODS = frozenset(
    {
        "savefig",
        "write_image",
        "write_html",
        "write_json",
        "write_text",
        "write_bytes",
        "tofile",
        "touch",
        "unlink",
        "rmdir",
        "mkdir",
        "symlink_to",
        "hardlink_to",
        "rmtree",
        "ExcelWriter",
        "HDFStore",
        "writelines",
    }
)
# pandas' (and xarray's) writers: a file only when given a path (to_csv() alone returns text).
TO_PATH_METHODS = frozenset(
    {
        *(
            f"to_{kind}"
            for kind in (
                "csv excel parquet json feather hdf pickle stata orc sql html latex markdown"
                " string xml netcdf zarr"
            ).split()
        ),
    }
)
PATH_KEYWORDS = frozenset({"path", "path_or_buf", "path_or_buffer", "buf", "excel_writer", "name", "con"})
WRITING_MODE = re.compile(r"[wax+]")
LOOKS_LIKE_MODE = re.compile(r"[rwxabtU+]{1,4}(:\w*)?")
STANDARD_STREAMS = frozenset({"sys.stdout", "sys.stderr"})


SQL_CELL = re.compile(r"\A%%sql\b(?:[ \t]+([A-Za-z_]\w*))?")
CONNECTION_FUNCTIONS = frozenset({"connection", "sql"})
DUCKDB_WRITES = re.compile(r"\b(copy|export|attach|install|load)\b", re.IGNORECASE)


def writes(code: str, writable: frozenset[str] = frozenset()) -> list[str]:
    """Where ``code`` writes: files, and through the session's ``writable`` connections (their
    names), each as "line N: what"; empty when it only reads, computes and shows."""
    return sorted(set(file_writes(code) + connection_writes(code, writable)), key=_by_line)[:40]


def connection_writes(code: str, writable: frozenset[str]) -> list[str]:
    """The lines of ``code`` that use a connection of ``writable``."""
    sql_cell = SQL_CELL.match(code)
    if sql_cell:
        name = sql_cell.group(1)
        return [f"line 1: %%sql on {name}, which may write"] if name in writable else []
    if not writable:
        return []
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []  # file_writes says so already
    found = []
    for call in [node for node in ast.walk(tree) if isinstance(node, ast.Call)]:
        function = call.func.id if isinstance(call.func, ast.Name) else ""
        if function not in CONNECTION_FUNCTIONS:
            continue
        first = call.args[0] if call.args else None
        named = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
        if named in writable:
            found.append(f"line {call.lineno}: {function}({named!r}), which may write")
        elif named is None and function == "connection":
            found.append(f"line {call.lineno}: connection(…) of a connection this reading cannot name")
    return found


def file_writes(code: str) -> list[str]:
    """Where ``code`` writes files, each as "line N: what" (the first few dozen); empty when it
    only reads, computes and shows."""
    sql_cell = SQL_CELL.match(code)
    if sql_cell:  # SQL, not Python: over the uploads, DuckDB writes a file only as told to
        if sql_cell.group(1) is None and DUCKDB_WRITES.search(code):
            return ["line 1: DuckDB SQL that may write a file (COPY, EXPORT, ATTACH)"]
        return []
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ["not plain Python (magics or shell commands may write anything)"]
    names = dict(PREIMPORTED)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            _bind_imports(node, names)
    try:
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                what = _writes(node, names)
                if what:
                    found.append(f"line {node.lineno}: {what}")
    except RecursionError:  # ast.unparse of a call nested past the stack: unreadable, so it waits
        found.append("line 1: code nested too deeply to read")
    return sorted(set(found), key=_by_line)[:40]


def _by_line(finding: str) -> tuple[int, str]:
    return int(finding.split(":", 1)[0].removeprefix("line ")), finding


def _bind_imports(node: ast.Import | ast.ImportFrom, names: dict[str, str]) -> None:
    """``import shutil as sh``, ``from os import remove``: the names a cell calls them by."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                names[alias.asname] = alias.name
            else:  # import os.path binds os
                top = alias.name.split(".")[0]
                names[top] = top
        return
    module = node.module or ""
    for alias in node.names:
        names[alias.asname or alias.name] = f"{module}.{alias.name}" if module else alias.name


def _dotted(node: ast.expr, names: dict[str, str]) -> str | None:
    """``sh.rmtree`` as "shutil.rmtree" (imports followed); None for anything but names and attributes."""
    attributes: list[str] = []
    while isinstance(node, ast.Attribute):
        attributes.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([names.get(node.id, node.id), *reversed(attributes)])


def _writes(call: ast.Call, names: dict[str, str]) -> str:
    """What this call writes, as the cell spells it; "" when it does not."""
    name = _dotted(call.func, names)
    method = call.func.attr if isinstance(call.func, ast.Attribute) else None
    spelled = ast.unparse(call.func)[:60]
    if name in MODE_AT or method == "open":
        return f"{spelled}(…) in a writing mode" if _writing_mode(call, name) else ""
    if name == "os.open":
        return "" if _read_only_flags(call) else f"{spelled}(…)"
    if name in WRITING_FUNCTIONS:
        return f"{spelled}(…)"
    if method is None:  # a bare name: savefig imported from matplotlib.pyplot, say
        last = (name or "").rsplit(".", 1)[-1]
        return f"{spelled}(…)" if "." in (name or "") and last in WRITING_METHODS else ""
    if method in TO_PATH_METHODS:
        given = call.args or any(k.arg in PATH_KEYWORDS for k in call.keywords)
        return f"{spelled}(…) to a file" if given else ""
    if method == "write":
        receiver = _dotted(call.func.value, names) if isinstance(call.func, ast.Attribute) else None
        return "" if receiver in STANDARD_STREAMS else f"{spelled}(…)"
    if method in WRITING_METHODS:
        return f"{spelled}(…)"
    return ""


def _writing_mode(call: ast.Call, name: str | None) -> bool:
    """Whether an ``open`` (of a file, a Path, an archive) asks to write, append or create. A
    mode this reading cannot know counts as writing."""
    mode: ast.expr | None = next((k.value for k in call.keywords if k.arg == "mode"), None)
    if mode is None:
        # open(path, mode) and its kin; a Path's or an archive's open(mode) takes it first.
        at = MODE_AT.get(name or "", 0)
        candidates = call.args[at : at + 1] if name in MODE_AT else call.args[:2]
        constants = [a for a in candidates if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if name in MODE_AT and candidates and not constants:
            return True  # open(path, mode) with a mode held in a variable
        modes = [str(a.value) for a in constants if LOOKS_LIKE_MODE.fullmatch(str(a.value))]  # type: ignore[union-attr]
        return any(WRITING_MODE.search(m) for m in modes)
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return bool(WRITING_MODE.search(mode.value))
    return True


def _read_only_flags(call: ast.Call) -> bool:
    flags = (
        call.args[1]
        if len(call.args) > 1
        else next((k.value for k in call.keywords if k.arg == "flags"), None)
    )
    return flags is not None and ast.unparse(flags) in ("os.O_RDONLY", "O_RDONLY", "0")
