"""In schema mode, the text values of the tables a cell leaves in the kernel or displays, so that
rows no describer read (a connection's, a frame the model's code built) are withheld from that
cell's output as a file's are.

A file's values are gathered once, when it is read (analyst.files); a database's tables are not
read ahead (their rows may be many, and change). So after each cell of a schema-mode session the
worker reads, through sandboxd's own inspection (no code of ours or the user's runs in the kernel,
and the cell is over), the first rows of each DataFrame or Series the kernel's namespace holds,
and the rows a displayed table carries, and keeps their text values, bounded. The cell's output
then reaches the history (and so every later request) with those values replaced by «col:NAME».

A query's result the cell kept in no variable and did not display (``print(sql(...))``) is read
too: the kernel's sql() leaves the cell's last results under CELL_RESULTS, hidden names the next
cell drops. What this does not catch: a value past the rows read, or one the code transformed. A
displayed table never reaches the model in schema mode whatever its source
(analyst.trust.privacy.reduced): its shape, types and numeric summaries do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from analyst.models import AnalysisSession
from analyst.models.sessions import Privacy
from analyst.trust import privacy
from sandboxes import CodeContext, Result, Sandbox, SandboxError, VariableNotFound

MAX_TABLES = 20  # of the namespace, read after a cell
ROWS = 100  # of each: the most sandboxd's inspection gives (its strings cut to 100 characters)
MAX_VALUES = 20_000
TEXT_TYPES = ("string", "any")  # pandas' table schema types of object and string columns
# The kernel's sql() keeps the cell's last results under these, newest first (the template's
# connections.py, CELL_RESULT_NAMES).
CELL_RESULTS = tuple(f"_analyst_sql_{n}" for n in range(1, 6))


def policy_after_cell(
    session: AnalysisSession, results: Iterable[Result], sandbox: Callable[[], Sandbox | None]
) -> privacy.Policy:
    """The policy for a cell's output: the session's, and in schema mode also withholding the
    text values of the tables the cell displayed or left in the kernel (``sandbox()``: the
    session's, asked only then; None when its kernel died in the cell)."""
    if privacy.effective(session) != Privacy.SCHEMA:
        return privacy.policy_for(session)
    return privacy.policy_for(session, gathered(sandbox(), results))


def gathered(sandbox: Sandbox | None, results: Iterable[Result]) -> dict[str, str]:
    """value -> its column, from the tables ``results`` display and those the kernel holds; only
    what displayed tables carry when the kernel cannot be read (no sandbox, a dead kernel)."""
    values: dict[str, str] = {}
    for result in results:
        resource = result.data
        if isinstance(resource, dict) and isinstance(resource.get("schema"), dict):
            _add(values, resource["schema"].get("fields"), resource.get("data"))
    if sandbox is None:
        return values
    context = sandbox.default_context
    try:
        tables = [v.name for v in context.variables() if v.table is True][:MAX_TABLES]
    except SandboxError:  # a sandbox gone since the cell: what was displayed
        return values
    for name in tables:
        _read(values, context, name)
    for name in CELL_RESULTS:
        if not _read(values, context, name):  # the cell's results end at the first name missing
            break
    return values


def _read(values: dict[str, str], context: CodeContext, name: str) -> bool:
    """Add the text values of the first ROWS rows of the table ``name``; False when there is no
    table by that name (gone since), True otherwise (one the inspection could not read too)."""
    try:
        preview = context.preview(name, rows=ROWS)
    except VariableNotFound:
        return False
    except SandboxError:  # the others still count
        return True
    _add(values, preview.fields, preview.data)
    return True


def _add(values: dict[str, str], fields: Any, rows: Any) -> None:
    """Add the text values of ``rows`` (one {field: value} per row) in the text ``fields``."""
    if not isinstance(fields, list) or not isinstance(rows, list):
        return
    names = [
        f["name"]
        for f in fields
        if isinstance(f, dict) and isinstance(f.get("name"), str) and f.get("type", "any") in TEXT_TYPES
    ]
    for row in rows:
        if not isinstance(row, dict):
            continue
        for name in names:
            value = row.get(name)
            if isinstance(value, str) and len(values) < MAX_VALUES:
                values.setdefault(value, name)
