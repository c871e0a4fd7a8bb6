"""Run the inspector cell in a context and check what it reports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sandboxes.errors import InspectionFailed, InvalidRequest, VariableNotFound
from sandboxes.kernels.kernel import KernelDied, in_own_namespace
from sandboxes.server.contexts import CodeContext
from sandboxes.server.snapshots.state_report import Malformed, name
from sandboxes.server.variables import in_kernel, report

SOURCE = Path(in_kernel.__file__).read_text()
NAMESPACE = "__sandbox_variables__"
# The cell's own budget is in_kernel.BUDGET_SECONDS; this bounds a kernel that ignores it.
TIMEOUT = 10.0
PREVIEW_ROWS = in_kernel.PREVIEW_ROWS


async def list_variables(context: CodeContext) -> dict[str, Any]:
    """{"variables": [...], "total"} of ``context``'s user namespace. ContextBusy while a cell
    runs; InspectionFailed for a report that is late or malformed."""
    return _checked(report.variables, await _run(context, "variables()"))


async def preview(context: CodeContext, variable: str, rows: int) -> dict[str, Any]:
    """The first ``rows`` rows of the DataFrame or Series ``variable``; VariableNotFound if it is
    not one."""
    try:
        name(variable)
    except Malformed:
        raise InvalidRequest("name a variable: a Python identifier") from None
    if not 0 <= rows <= PREVIEW_ROWS:
        raise InvalidRequest(f"rows must be from 0 to {PREVIEW_ROWS}")
    table = _checked(report.preview, await _run(context, f"preview({variable!r}, {rows})"))
    if table is None:
        raise VariableNotFound(f"no DataFrame or Series named {variable!r} in this context")
    return table


def _checked(check: Any, stdout: str) -> Any:
    try:
        return check(report.parse(stdout))
    except (Malformed, RecursionError) as exc:
        raise InspectionFailed(f"the kernel's report on its variables was malformed ({exc})") from None


async def _run(context: CodeContext, call: str) -> str:
    try:
        return await context.inspect(in_own_namespace(f"{SOURCE}\n{call}", NAMESPACE), TIMEOUT)
    except TimeoutError:
        late = f"the kernel took longer than {TIMEOUT:g} s to describe its variables"
        raise InspectionFailed(late) from None
    except KernelDied as exc:
        raise InspectionFailed(f"the kernel died while describing its variables ({exc})") from None
