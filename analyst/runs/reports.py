"""A run's end, reported once: its sandbox ended, then a failed scheduled run tried again while it
has tries left, else its notifications sent (the e-mail now, the webhook by its own task, retried
with backoff).

The reconciler sends REPORT_RUN for each run that ended unreported (analyst.turns.reconciler);
the task claims the run by setting ``reported``, so however often it is sent, a run is reported
once. A worker that dies between the claim and the sending loses that run's notifications: sent
at most once, never twice.
"""

from __future__ import annotations

import logging

from analyst import dispatch
from analyst.kernels import session_kernel
from analyst.models import Run
from analyst.runs import notifications, runs, schedules

log = logging.getLogger(__name__)

SEND_WEBHOOK = "analyst.tasks.send_webhook"


def report(run_id: object) -> str:
    """What was done for the run: "retried", "notified", "unscheduled" or "" (reported before,
    or not ended)."""
    run = Run.objects.select_related("turn", "session", "source", "schedule").filter(id=run_id).first()
    status = runs.status(run) if run is not None else ""
    if status in ("", "queued", "running"):
        return ""
    if not Run.objects.filter(id=run.id, reported=False).update(reported=True):
        return ""
    # Its kernel has done its work: ended, not left to pause (a schedule of every minute would
    # keep a sandbox a minute on sandboxd's disk); the session keeps its events and snapshot.
    session_kernel.release(run.session)
    if run.schedule is None:
        return "unscheduled"
    if status == "failed" and schedules.retry_or_none(run) is not None:
        return "retried"
    told = notifications.summary(run)
    try:
        notifications.send_email(run.schedule, told)
    except OSError as exc:  # the mail server refused or is away: said in the log, the run stands
        log.warning("run %s: the e-mail was not sent: %s", run.id, exc)
    if run.schedule.webhook_url:
        dispatch.send(SEND_WEBHOOK, str(run.id))
    return "notified"


def deliver_webhook(run_id: object) -> None:
    """POST the run's webhook; httpx.HTTPError for the task to try again."""
    run = Run.objects.select_related("turn", "session", "source", "schedule").get(id=run_id)
    schedule = run.schedule
    if schedule is None or not schedule.webhook_url:
        return
    body = notifications.webhook_body(notifications.summary(run))
    try:
        notifications.post_webhook(schedule.webhook_url, schedule.webhook_secret, body)
    except notifications.WebhookRefused as exc:
        log.warning("run %s: the webhook was not sent: %s", run.id, exc)
