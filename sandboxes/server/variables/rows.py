"""A table's rows over the whole frame: a page (sorted, filtered) or all of them as a CSV file,
computed in the kernel by the rows cell between cells and checked before anyone sees them."""

from __future__ import annotations

import base64
import json
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandboxes.drivers.base import SANDBOX_HOME
from sandboxes.errors import InspectionFailed, InvalidRequest
from sandboxes.kernels.kernel import KernelDied, in_own_namespace
from sandboxes.server import files
from sandboxes.server.contexts import CodeContext
from sandboxes.server.snapshots.state_report import Malformed, name
from sandboxes.server.variables import rows_in_kernel, rows_report

SOURCE = Path(rows_in_kernel.__file__).read_text()
NAMESPACE = "__sandbox_rows__"
MAX_LIMIT = rows_in_kernel.MAX_LIMIT
MAX_FILTER_CHARS = 200
PAGE_SECONDS = 8.0  # the cell's own timer; sandboxd interrupts it a little later
CSV_SECONDS = 120.0
GRACE_SECONDS = 2.0
TOKEN = re.compile(r"[0-9a-f]{1,64}")


@dataclass(frozen=True)
class Query:
    """Which table, and how its rows are chosen and ordered: ``token`` (from a shown result's
    data resource) asks for the table that result showed, not whatever ``name`` holds now."""

    name: str
    token: str | None = None
    sort: str | None = None
    desc: bool = False
    filter: str = ""

    def __post_init__(self) -> None:
        try:
            name(self.name)
        except Malformed:
            raise InvalidRequest("name a variable: a Python identifier") from None
        if self.token is not None and not TOKEN.fullmatch(self.token):
            raise InvalidRequest("a table's token is hexadecimal")
        if self.sort is not None and not 0 < len(self.sort) <= rows_report.MAX_NAME_CHARS:
            raise InvalidRequest(f"sort names a column: 1 to {rows_report.MAX_NAME_CHARS} characters")
        if len(self.filter) > MAX_FILTER_CHARS:
            raise InvalidRequest(f"the filter is at most {MAX_FILTER_CHARS} characters")

    def request(self, **more: Any) -> dict[str, Any]:
        chosen = {"name": self.name, "token": self.token, "sort": self.sort, "desc": self.desc}
        return chosen | {"filter": self.filter} | more


async def page(context: CodeContext, query: Query, *, offset: int, limit: int) -> dict[str, Any]:
    """{"total_rows" (that match), "all_rows", "offset", "columns", "rows"}: at most ``limit`` rows
    from ``offset`` of the filtered, sorted table (fewer when their text passes the page's
    size). VariableNotFound, InvalidRequest, ContextBusy; InspectionFailed when late or malformed."""
    if offset < 0 or not 0 < limit <= MAX_LIMIT:
        raise InvalidRequest(f"offset is 0 or more, limit from 1 to {MAX_LIMIT}")
    request = query.request(offset=offset, limit=limit, seconds=PAGE_SECONDS)
    return _checked(rows_report.page, await _run(context, "rows", request, PAGE_SECONDS))


async def csv_file(context: CodeContext, workdir: Path, query: Query, *, max_bytes: int) -> tuple[int, int]:
    """(descriptor, size) of the filtered, sorted table written as CSV by the kernel, already
    unlinked from the workdir (the caller streams and closes it). FileTooLarge past
    ``max_bytes``; otherwise as page()."""
    if max_bytes <= 0:
        raise InvalidRequest("max_bytes is a positive number of bytes")
    file_name = f".sandbox-export-{secrets.token_hex(16)}.csv"
    request = query.request(path=f"{SANDBOX_HOME}/{file_name}", max_bytes=max_bytes, seconds=CSV_SECONDS)
    try:
        _checked(rows_report.written, await _run(context, "csv", request, CSV_SECONDS))
        return files.open_for_read(workdir, file_name)
    finally:
        files.remove(workdir, file_name)


def _checked(check: Any, stdout: str) -> Any:
    try:
        return check(rows_report.parse(stdout))
    except (Malformed, RecursionError) as exc:
        raise InspectionFailed(f"the kernel's report on the table's rows was malformed ({exc})") from None


async def _run(context: CodeContext, function: str, request: dict[str, Any], seconds: float) -> str:
    """The cell's stdout. The request goes in as base64 of JSON: whatever the name or the
    filter holds, the code sent is this file and one call with a base64 literal."""
    encoded = base64.b64encode(json.dumps(request).encode()).decode("ascii")
    code = in_own_namespace(f"{SOURCE}\n{function}({encoded!r})", NAMESPACE)
    try:
        return await context.inspect(code, seconds + GRACE_SECONDS)
    except TimeoutError:
        raise InspectionFailed(f"the kernel took longer than {seconds:g} s over the table") from None
    except KernelDied as exc:
        raise InspectionFailed(f"the kernel died over the table ({exc})") from None
