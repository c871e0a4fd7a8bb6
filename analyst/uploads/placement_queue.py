"""Handing file placements to the broker, and claiming them, so none is lost and none runs twice.

``DataFile.placement_due`` says when something must next happen to a placing file: the time its
task was sent or its retry falls due, or, once a worker took it, when that attempt's time limit
ends. A delivery claims the placement only when it is due (a duplicate of a running placement
finds it not due and leaves); the reconciler sends again a file overdue by ANALYST_REQUEUE_AFTER
(its message was lost) or never sent.
"""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from analyst import dispatch
from analyst.models import DataFile

# A placement attempt's hard time limit (tasks.place_file's): after it, a claimed one is over.
ATTEMPT_LIMIT = 330

PLACING = DataFile.Placement.PLACING


def enqueue(file_id: int) -> bool:
    """Send the file's placement; False (logged) when the broker did not take it."""
    if not dispatch.send(dispatch.PLACE_FILE, file_id):
        return False
    # Only if no worker claimed it meanwhile (its claim set a later due time).
    DataFile.objects.filter(id=file_id, placement=PLACING, placement_due=None).update(
        placement_due=timezone.now()
    )
    return True


def resend(data_file: DataFile) -> bool:
    """Send a placing file again unless another process has since (``placement_due`` is what this
    one saw); False when someone else did or the broker did not take it."""
    placing = DataFile.objects.filter(id=data_file.id, placement=PLACING)
    return dispatch.resend(
        placing, "placement_due", data_file.placement_due, dispatch.PLACE_FILE, data_file.id
    )


def claim(file_id: int) -> bool:
    """Take a due placement for this worker's attempt; False when another delivery has it."""
    now = timezone.now()
    due = DataFile.objects.filter(id=file_id, placement=PLACING).exclude(placement_due__gt=now)
    return bool(due.update(placement_due=now + timedelta(seconds=ATTEMPT_LIMIT)))


def retry_at(file_id: int, delay: float) -> None:
    """This attempt ends; the next falls due in ``delay`` seconds (Celery's retry sends it)."""
    due = timezone.now() + timedelta(seconds=delay)
    DataFile.objects.filter(id=file_id, placement=PLACING).update(placement_due=due)
