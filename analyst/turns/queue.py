"""Handing turns to the broker: the Turn row is the truth, the broker's message only a nudge.

A turn whose message never reached the broker (Redis down) or was lost there (Redis restarted
without its data, a worker that died holding it) stays queued in the database with an old or
empty ``enqueued_at``; the reconciler sends it again. A second delivery is harmless: the claim
is atomic, so a turn runs once.
"""

from __future__ import annotations

from django.utils import timezone

from analyst import dispatch
from analyst.models import Turn


def enqueue(turn_id: int) -> bool:
    """Send the turn's task and note when; False (logged) when the broker did not take it."""
    if not dispatch.send(dispatch.RUN_TURN, turn_id):
        return False
    Turn.objects.filter(id=turn_id, status=Turn.Status.QUEUED).update(enqueued_at=timezone.now())
    return True


def resend(turn: Turn) -> bool:
    """Send a queued turn again, unless another process has since (``turn.enqueued_at`` is what
    this one saw); False when someone else did or the broker did not take it."""
    queued = Turn.objects.filter(id=turn.id, status=Turn.Status.QUEUED)
    return dispatch.resend(queued, "enqueued_at", turn.enqueued_at, dispatch.RUN_TURN, turn.id)
