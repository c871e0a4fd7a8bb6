"""Reading an upload inside its sandbox: the describer's cell (describer_cell.py) run in a code
context of its own, its report checked before anything of ours uses it."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings

from analyst.files import reports as file_reports
from analyst.files.describer_cell import describer_source
from analyst.models import DataFile
from sandboxes import Sandbox

DESCRIBE_TIMEOUT = 120


def describe_in(sandbox: Sandbox, data_file: DataFile) -> dict[str, Any]:
    """What the describer finds in ``data_file`` (already in the sandbox), checked; a zip is
    unpacked beside itself as it goes. Runs in a context of its own: a running turn keeps the
    default one busy, and a file that crashes its reader takes no one's variables with it."""
    request = {
        "path": data_file.path,
        "options": data_file.read_options,
        "limits": settings.ANALYST_READING_LIMITS,
    }
    # The cell binds json itself: this runs it exactly as the describer's tests do.
    code = f"{describer_source()}\nmain(json.loads({json.dumps(json.dumps(request))}))\n"
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
