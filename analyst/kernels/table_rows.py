"""A table's grid over the whole frame: pages of a live DataFrame, filtered and sorted in the
kernel, and its CSV, read through the SDK between turns.

Like the variables panel (variables.py), nothing here starts a sandbox, and the kernel is not
asked while a turn runs: KernelBusy (409), which the grid retries, so a page never waits on a
cell. What the kernel answers is checked again here.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

from analyst.connections.redaction import redacted_chunks
from analyst.connections.session_secrets import redactor_for
from analyst.kernels import hosts as sandbox_hosts
from analyst.kernels.printable import printable
from analyst.kernels.session_files import live_sandbox
from analyst.kernels.variables import MAX_NAME, KernelBusy, NoKernel, NotATable, turn_running
from analyst.models import AnalysisSession
from sandboxes import (
    ContextBusy,
    FileTooLarge,
    InspectionFailed,
    InvalidRequest,
    Sandbox,
    SandboxError,
    VariableNotFound,
)

MAX_LIMIT = 500
MAX_CELL = 1000
MAX_COLUMN_NAME = MAX_NAME + 8
TOKEN = re.compile(r"[0-9a-f]{1,64}")


class BadQuery(Exception):
    """A parameter the grid should never send: 400."""


class CsvTooLarge(Exception):
    """The table's CSV is past ANALYST_GRID_CSV_MAX_BYTES: 413."""


@dataclass(frozen=True)
class Query:
    """Which table (``token``: the very one a cell's result showed) and how its rows are chosen."""

    name: str
    token: str | None = None
    sort: str | None = None
    desc: bool = False
    filter: str = ""

    def __post_init__(self) -> None:
        if not self.name.isidentifier() or len(self.name) > MAX_NAME:
            raise NotATable(f"{self.name[:MAX_NAME]!r} is not a variable name")
        if self.token is not None and not TOKEN.fullmatch(self.token):
            raise BadQuery("token is the hexadecimal token of a shown table")
        if self.sort is not None and not 0 < len(self.sort) <= MAX_COLUMN_NAME:
            raise BadQuery("sort names a column")
        if len(self.filter) > 200:
            raise BadQuery("the filter is at most 200 characters")

    def options(self) -> dict[str, Any]:
        return {"token": self.token, "sort": self.sort, "desc": self.desc, "filter": self.filter}


def page(session: AnalysisSession, query: Query, *, offset: int, limit: int) -> dict[str, Any]:
    """{"total_rows" (matching), "all_rows", "offset", "columns": [{"name", "type"}], "rows"}.
    Raises NoKernel, KernelBusy, NotATable (no such table, or no longer the one shown), BadQuery,
    InspectionFailed."""
    if offset < 0 or not 0 < limit <= MAX_LIMIT:
        raise BadQuery(f"offset is 0 or more; limit from 1 to {MAX_LIMIT}")
    with live_sandbox(session) as sandbox:
        if sandbox is None:
            raise NoKernel("the session's sandbox is not running")
        if turn_running(session):
            raise KernelBusy("a turn is running; the table answers once it ends")
        with _translated(query):
            found = sandbox.default_context.rows(query.name, offset=offset, limit=limit, **query.options())
    columns = [{"name": _name(c.get("name")), "type": printable(c.get("type"), 20)} for c in found.columns]
    rows = [[_cell(value) for value in row[: len(columns)]] for row in found.rows[:MAX_LIMIT]]
    return {
        "total_rows": _count(found.total_rows),
        "all_rows": _count(found.all_rows),
        "offset": _count(found.offset),
        "columns": columns,
        "rows": redactor_for(session).value(rows),  # a secret in a cell shows as «secret:NAME»
    }


def csv_chunks(session: AnalysisSession, query: Query, *, max_bytes: int) -> AsyncIterator[bytes]:
    """The whole table, filtered and sorted, as CSV bytes: its first chunk already read, so an
    error (as page(), or CsvTooLarge) is raised here, before the caller answers 200."""
    if not session.sandbox_id:
        raise NoKernel("the session's sandbox is not running")
    if turn_running(session):
        raise KernelBusy("a turn is running; the table can be downloaded once it ends")
    redactor = redactor_for(session)
    try:
        sandbox = Sandbox.connect(session.sandbox_id, url=sandbox_hosts.url(session.sandbox_host))
    except SandboxError:
        raise NoKernel("the session's sandbox is not running") from None
    try:
        with _translated(query):
            stream = iter(
                sandbox.default_context.csv_chunks(query.name, max_bytes=max_bytes, **query.options())
            )
            first = next(stream, b"")
    except BaseException:
        sandbox.close()
        raise
    return redacted_chunks(_rest(sandbox, stream, first), redactor)


async def _rest(sandbox: Sandbox, stream: Iterator[bytes], first: bytes) -> AsyncIterator[bytes]:
    try:
        yield first
        while (chunk := await asyncio.to_thread(next, stream, None)) is not None:
            yield chunk
    finally:
        await asyncio.to_thread(_close, sandbox, stream)


def _close(sandbox: Sandbox, stream: Iterator[bytes]) -> None:
    try:
        close = getattr(stream, "close", None)
        if close is not None:
            close()
    except ValueError:  # still being read in another thread (the client left)
        pass
    finally:
        sandbox.close()


@contextlib.contextmanager
def _translated(query: Query) -> Iterator[None]:
    """The SDK's errors as this module's."""
    try:
        yield
    except InspectionFailed:
        raise
    except ContextBusy:
        raise KernelBusy("the kernel is running a cell") from None
    except VariableNotFound:
        said = "there is no longer" if query.token else "there is no"
        raise NotATable(f"{said} a DataFrame or Series named {query.name!r} in the kernel") from None
    except FileTooLarge as exc:
        raise CsvTooLarge(str(exc)) from None
    except InvalidRequest as exc:
        raise BadQuery(str(exc)) from None
    except SandboxError:  # expired since it was found
        raise NoKernel("the session's sandbox is not running") from None


def _count(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 63:
        return value
    raise InspectionFailed("the kernel's count of rows was not a count")


def _name(value: object) -> str:
    return printable(value, MAX_COLUMN_NAME)


def _cell(value: object) -> str | int | float | bool | None:
    if value is None or isinstance(value, (bool, float)):
        return value
    if isinstance(value, int):
        return value if -(1 << 53) <= value <= 1 << 53 else str(value)
    return value[:MAX_CELL] if isinstance(value, str) else None
