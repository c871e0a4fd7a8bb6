"""Uploads, the worker side: a stored file written into the session's sandbox and described
there (analyst/files/inside_sandbox/describe.py runs in a code context of its own), tried again
while sandboxd is away, and waited for by a turn that needs it."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from analyst.files import reports as file_reports
from analyst.files.reading import describe_in
from analyst.kernels.session_kernel import UNREACHED, SessionKernel
from analyst.models import AnalysisSession, DataFile
from analyst.realtime import events
from analyst.trust import sensitive_columns
from analyst.uploads import placement_queue
from sandboxes import Sandbox, SandboxError

log = logging.getLogger(__name__)
WAIT_POLL = 0.5


def place(data_file_id: int) -> None:
    """Write the file into the sandbox and describe it there. Raises SandboxError
    (``retryable`` when sandboxd is away or slow: place_or_retry tries again)."""
    data_file = (
        DataFile.objects.select_related("session")
        .filter(id=data_file_id, placement=DataFile.Placement.PLACING)
        .first()
    )
    if data_file is None or not placement_queue.claim(data_file_id):
        return  # deleted meanwhile, or a duplicate delivery of a placement ended or running
    session = data_file.session
    kernel = SessionKernel(session, emit=lambda type, payload: events.append(session.id, type, payload))
    sandbox = kernel.sandbox()
    try:
        write(sandbox, data_file)
    except UNREACHED as exc:
        kernel.replace_if_host_lost(exc)  # raises it again while the session's host answers
        sandbox = kernel.sandbox()  # on another host now, with every upload but this one
        write(sandbox, data_file)
    if ready(data_file, describe_in(sandbox, data_file)):
        events.append(session.id, "file_added", file_reports.upload_entry(data_file))


def write(sandbox: Sandbox, data_file: DataFile) -> None:
    with data_file.stored.open("rb") as content:
        sandbox.files.write(data_file.path, content)


def ready(data_file: DataFile, description: dict[str, Any]) -> bool:
    """The file is in the sandbox: store what was found in it and what the model is told of it.
    False when it was deleted meanwhile."""
    data_file.description = description
    data_file.rows, data_file.columns = file_reports.first_table_shape(description)
    data_file.summary = file_reports.summary(data_file.path, description)
    data_file.proposed_marks = sensitive_columns.proposed_marks(
        description, data_file.path, decided=data_file.column_marks
    )
    data_file.placement, data_file.placement_error = DataFile.Placement.READY, ""
    fields = ("description", "rows", "columns", "summary", "proposed_marks", "placement", "placement_error")
    placing = DataFile.objects.filter(id=data_file.id, placement=DataFile.Placement.PLACING)
    return bool(placing.update(**{field: getattr(data_file, field) for field in fields}))


def place_or_retry(data_file_id: int, *, tries: int, retry: Callable[[float], BaseException]) -> None:
    """place() as try number ``tries``: while sandboxd is away or slow, call ``retry`` with the
    seconds to wait (it raises: Celery's Task.retry); after the last try, or on a failure no
    retry would mend, mark the file failed with an event saying why."""
    try:
        place(data_file_id)
    except SandboxError as exc:
        log.warning("placing file %s, try %s: %s: %s", data_file_id, tries, exc.code, exc.message)
        if exc.retryable and tries < place_tries():
            delay = retry_delay(tries - 1)
            placement_queue.retry_at(data_file_id, delay)
            raise retry(delay) from exc
        why = f"{exc.message}; tried {tries} times" if exc.retryable else exc.message
        fail_placement(data_file_id, why)
    except SoftTimeLimitExceeded:
        fail_placement(data_file_id, "placing it took longer than its time limit")
    except Exception:
        fail_placement(data_file_id, "an internal error stopped it")
        raise


def place_tries() -> int:
    """How many times a placement is tried before the file is marked failed."""
    return settings.ANALYST_PLACE_TRIES


def retry_delay(retries_done: int) -> float:
    """Seconds before the next try: doubling from ANALYST_PLACE_BACKOFF, at most a minute
    (by default 4, 8, 16, 32 s: with the SDK's 30 s timeouts, about two to three minutes)."""
    first = settings.ANALYST_PLACE_BACKOFF
    return min(first * 2**retries_done, 60.0)


def fail_placement(data_file_id: int, reason: str) -> None:
    """The file could not be placed: mark it failed and say so in an ``error`` event (once)."""
    failed = DataFile.objects.filter(id=data_file_id, placement=DataFile.Placement.PLACING).update(
        placement=DataFile.Placement.FAILED, placement_error=reason[:2000]
    )
    data_file = DataFile.objects.filter(id=data_file_id).first()
    if not failed or data_file is None:
        return
    message = f"{data_file.name} could not be put in the sandbox ({reason}). Retry it from the files panel."
    events.append(
        data_file.session_id,
        "error",
        {"code": "file_not_placed", "message": message, "file": file_reports.upload_entry(data_file)},
    )


def wait_for_files(
    session: AnalysisSession, *, emit: Callable[[str, dict[str, Any]], None], check: Callable[[], None]
) -> None:
    """Before a turn's first model request: the session's uploads still on their way are placed
    here (or, when another worker has one, waited for), so the model is told what they hold.
    ``check`` raises to stop waiting (a Stop). A file that fails is said by its own event."""
    placing = DataFile.objects.filter(session=session, placement=DataFile.Placement.PLACING)
    waiting = list(placing.values("id", "name", "path"))
    if not waiting:
        return
    emit("files_waiting", {"files": waiting})
    deadline = time.monotonic() + placement_queue.ATTEMPT_LIMIT
    while waiting and time.monotonic() < deadline:
        for data_file in waiting:
            if not _place_within_turn(data_file["id"]):
                return  # sandboxd is away: the turn meets it too, and says so
        check()
        waiting = list(placing.values("id", "name", "path"))
        if waiting:
            time.sleep(WAIT_POLL)


def _place_within_turn(data_file_id: int) -> bool:
    """place(), here and now, unless another worker is at it; False when sandboxd is away (the
    file's own task tries again)."""
    try:
        place(data_file_id)
    except SandboxError as exc:
        if exc.retryable:
            placement_queue.retry_at(data_file_id, 0)
            return False
        fail_placement(data_file_id, exc.message)
    return True
