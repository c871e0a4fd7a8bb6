"""The variables panel: the user's variables in the session's kernel, a table's first rows, and
the kernel's memory against its limit, read through the SDK while the sandbox runs.

Nothing here starts a sandbox or runs code of the user's: sandboxd reads the namespace with a
silent cell of its own (no count, no transcript). It is asked only between turns, so the panel
never delays a cell. What it returns is checked again here, as all sandbox output is: the
kernel ran the user's code first and could have patched anything.
"""

from __future__ import annotations

from typing import Any

from django.utils.html import escape

from analyst.connections.session_secrets import redactor_for
from analyst.kernels.printable import printable
from analyst.kernels.session_files import live_sandbox
from analyst.models import AnalysisSession, Turn
from sandboxes import ContextBusy, InspectionFailed, Sandbox, SandboxError, VariableNotFound

PREVIEW_ROWS = 50
MAX_VARIABLES = 500
MAX_NAME = 200
MAX_TYPE = 100
MAX_CELL = 200
DATARESOURCE = "application/vnd.dataresource+json"


class NoKernel(Exception):
    """The session has no running sandbox (never started, expired or stopped)."""


class KernelBusy(Exception):
    """A turn is running: the kernel is asked again once it ends."""


class NotATable(Exception):
    pass


def listing(session: AnalysisSession) -> dict[str, Any]:
    """{"status", "variables", "total", "memory"}: status "ready" with the variables; "busy"
    while a turn runs (memory still said); "none" with no running sandbox; "failed" (and a
    "message") when the kernel could not describe them."""
    answer: dict[str, Any] = {"status": "none", "variables": [], "total": 0, "memory": None}
    with live_sandbox(session) as sandbox:
        if sandbox is None:
            return answer
        try:
            if turn_running(session):
                answer["status"] = "busy"
            else:
                found = sandbox.default_context.variables()
                answer["variables"] = [_entry(v) for v in found[:MAX_VARIABLES]]
                answer["total"] = max(_count(found.total) or 0, len(answer["variables"]))
                answer["status"] = "ready"
            answer["memory"] = _memory(sandbox)
        except ContextBusy:
            answer["status"] = "busy"
        except InspectionFailed as exc:
            answer.update(status="failed", message=str(exc)[:300])
        except SandboxError:  # expired since it was found
            return {**answer, "status": "none"}
    return answer


def preview(session: AnalysisSession, name: str) -> dict[str, Any]:
    """The first rows of the table ``name`` as a result payload: ``data`` holds pandas' table
    schema JSON (the dataresource MIME type, with ``total_rows``) and an escaped HTML table.
    Raises NoKernel, KernelBusy, NotATable or InspectionFailed."""
    if not name.isidentifier() or len(name) > MAX_NAME:
        raise NotATable(f"{name[:MAX_NAME]!r} is not a variable name")
    with live_sandbox(session) as sandbox:
        if sandbox is None:
            raise NoKernel("the session's sandbox is not running")
        if turn_running(session):
            raise KernelBusy("a turn is running; the table can be shown once it ends")
        try:
            table = sandbox.default_context.preview(name, rows=PREVIEW_ROWS)
        except ContextBusy:
            raise KernelBusy("the kernel is running a cell") from None
        except VariableNotFound:
            raise NotATable(f"there is no DataFrame or Series named {name!r} in the kernel") from None
        except InspectionFailed:
            raise
        except SandboxError:  # expired since it was found
            raise NoKernel("the session's sandbox is not running") from None
    fields = [
        {"name": printable(field.get("name"), MAX_NAME), "type": printable(field.get("type"), 20)}
        for field in table.fields
    ]
    names = [field["name"] for field in fields]
    rows = [{key: _cell(row.get(key)) for key in names} for row in table.data[:PREVIEW_ROWS]]
    total_rows = _count(table.total_rows) or 0
    resource = {
        "schema": {"fields": fields},
        "data": rows,
        "total_rows": total_rows,
        "variable": {"name": name},
    }
    redactor = redactor_for(session)
    resource, html = redactor.value(resource), redactor.text(_html(names, rows))
    return {
        "data": {DATARESOURCE: resource, "text/html": html},
        "total_rows": total_rows,
        "total_columns": _count(table.total_columns) or 0,
    }


def turn_running(session: AnalysisSession) -> bool:
    return session.turns.exclude(status__in=Turn.FINISHED).exclude(status=Turn.Status.QUEUED).exists()


def _memory(sandbox: Sandbox) -> dict[str, int | None] | None:
    info = sandbox.get_info()
    limit = _count(info.memory_limit)
    return {"used": _count(info.memory_used), "limit": limit} if limit else None


def _entry(variable: Any) -> dict[str, Any]:
    shape = variable.shape if isinstance(variable.shape, list) else None
    return {
        "name": printable(variable.name, MAX_NAME),
        "type": printable(variable.type, MAX_TYPE),
        "shape": [_count(n) or 0 for n in shape[:32]] if shape is not None else None,
        "length": _count(variable.length),
        "size": _count(variable.size),
        "approximate": variable.approximate is True,
        "table": variable.table is True,
    }


def _count(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 63:
        return value
    return None


def _cell(value: object) -> str | int | float | bool | None:
    if value is None or isinstance(value, (bool, float)):
        return value
    if isinstance(value, int):
        return value if -(1 << 63) <= value < 1 << 64 else None
    return printable(value, MAX_CELL)


def _html(names: list[str], rows: list[dict[str, Any]]) -> str:
    """A plain table, every name and value escaped (the renderer sanitises HTML as well)."""
    head = "".join(f"<th>{escape(name)}</th>" for name in names)
    body = "".join(
        "<tr>" + "".join(f"<td>{'' if row[n] is None else escape(str(row[n]))}</td>" for n in names) + "</tr>"
        for row in rows
    )
    return f'<table class="dataframe"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
