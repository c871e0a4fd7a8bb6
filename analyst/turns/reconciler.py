"""What every worker does every few seconds so that no session stays stuck after a fault.

- a running turn whose lease lapsed (its worker or pool process died) ends as failed;
- a queued turn whose task never reached the broker, or was lost there, is sent again;
- a queued turn no worker started within ANALYST_QUEUED_MAX ends as failed, saying why;
- an upload whose placement was never sent, or is overdue (its message lost, its worker dead),
  is sent again;
- a run that ended is reported (a scheduled one tried again, or its notifications sent).

Each action is an atomic update on the Turn or DataFile row, so reconcilers in several workers
at once do each thing once.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from analyst import dispatch
from analyst.models import DataFile, Run, Turn
from analyst.ops import metrics
from analyst.turns import queue as turn_queue
from analyst.turns import turns
from analyst.uploads import placement_queue

log = logging.getLogger(__name__)
NEVER_SENT_GRACE = 3.0  # seconds
REPORT_RUN = "analyst.tasks.report_run"


def reconcile(now: datetime | None = None) -> dict[str, int]:
    """One pass; how many turns (or files) each action touched."""
    now = now or timezone.now()
    done = {
        "failed_orphan": turns.fail_orphans(now=now),
        "expired": expire_queued(now),
        "requeued": requeue_lost(now),
        "placement_resent": resend_lost_placements(now),
        "run_reports_sent": report_ended_runs(now),
    }
    for action, count in done.items():
        if count:
            metrics.count("reconciler_actions", count, action=action)
            log.info("reconciler: %s: %d", action, count)
    return done


def requeue_lost(now: datetime) -> int:
    """Send again each queued turn not waiting behind another that was sent ANALYST_REQUEUE_AFTER
    ago and has not started, or never sent (a few seconds after it was stored: the web process
    sends it first)."""
    stale = now - timedelta(seconds=settings.ANALYST_REQUEUE_AFTER)
    unsent = Q(enqueued_at=None, created_at__lt=now - timedelta(seconds=NEVER_SENT_GRACE))
    lost = Turn.objects.filter(
        ~turns.behind_an_unfinished_turn(), unsent | Q(enqueued_at__lt=stale), status=Turn.Status.QUEUED
    )
    return sum(turn_queue.resend(turn) for turn in lost.order_by("id"))


def expire_queued(now: datetime) -> int:
    """End the turns not waiting behind another and queued longer than ANALYST_QUEUED_MAX:
    running them now would answer a question asked long ago, by surprise."""
    limit = settings.ANALYST_QUEUED_MAX
    old = Turn.objects.filter(
        ~turns.behind_an_unfinished_turn(),
        status=Turn.Status.QUEUED,
        created_at__lt=now - timedelta(seconds=limit),
    )
    reason = f"no worker could start this turn within {limit // 60} min; ask again"
    return sum(turns.end_unrun(turn, Turn.Status.FAILED, "turn_failed", reason) for turn in old)


def resend_lost_placements(now: datetime) -> int:
    """Send again each placing file overdue by ANALYST_REQUEUE_AFTER, or never sent."""
    stale = now - timedelta(seconds=settings.ANALYST_REQUEUE_AFTER)
    unsent = Q(placement_due=None, uploaded_at__lt=now - timedelta(seconds=NEVER_SENT_GRACE))
    lost = DataFile.objects.filter(unsent | Q(placement_due__lt=stale), placement=DataFile.Placement.PLACING)
    return sum(placement_queue.resend(data_file) for data_file in lost.order_by("id"))


def report_ended_runs(now: datetime) -> int:
    """Send REPORT_RUN for each run that ended and was not reported, unless it was sent
    ANALYST_REQUEUE_AFTER ago or less (analyst.runs.reports)."""
    stale = now - timedelta(seconds=settings.ANALYST_REQUEUE_AFTER)
    ended = Run.objects.filter(
        Q(report_sent_at=None) | Q(report_sent_at__lt=stale), reported=False, turn__status__in=Turn.FINISHED
    )
    return sum(
        dispatch.resend(
            Run.objects.filter(id=run.id), "report_sent_at", run.report_sent_at, REPORT_RUN, str(run.id)
        )
        for run in ended.only("id", "report_sent_at")
    )
