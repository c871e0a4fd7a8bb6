"""Celery tasks: thin wrappers that pass ids to the turn services."""

from __future__ import annotations

import httpx
from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings

from analyst.audit import pruning
from analyst.runs import reports as run_reports
from analyst.runs import schedules
from analyst.turns import turns, worker_watch
from analyst.uploads import placement_queue, placements


@shared_task(
    acks_late=True,
    soft_time_limit=settings.ANALYST_TURN_TIMEOUT,
    time_limit=settings.ANALYST_TURN_TIMEOUT + 30,
)
def run_turn(turn_id: int) -> None:
    turns.execute(turn_id)


@worker_ready.connect
def _watch(sender: object, **_: object) -> None:
    """Every worker beats and reconciles from its start: the turns a dead pool process or a dead
    worker left running end, and turns whose message was lost are sent again."""
    worker_watch.start(getattr(sender, "hostname", "") or "worker")


@shared_task(
    bind=True,
    acks_late=True,
    soft_time_limit=placement_queue.ATTEMPT_LIMIT - 30,
    time_limit=placement_queue.ATTEMPT_LIMIT,
    max_retries=None,
)
def place_file(self, data_file_id: int) -> None:  # self: the bound Celery Task
    """Tried again with backoff while sandboxd is away (ANALYST_PLACE_TRIES in all), then the
    file is marked failed with an error event; POST .../files/<id>/retry enqueues it again."""
    placements.place_or_retry(
        data_file_id, tries=self.request.retries + 1, retry=lambda delay: self.retry(countdown=delay)
    )


@shared_task
def start_scheduled_run(schedule_id: int) -> None:
    """Sent by Celery beat at each time a schedule names."""
    schedules.start_due_run(schedule_id)


@shared_task
def report_run(run_id: str) -> None:
    """Sent by the reconciler once a run ended: tried again, or notified."""
    run_reports.report(run_id)


@shared_task(
    autoretry_for=(httpx.HTTPError,),
    retry_backoff=2,
    retry_backoff_max=600,
    max_retries=settings.ANALYST_WEBHOOK_RETRIES,
)
def send_webhook(run_id: str) -> None:
    run_reports.deliver_webhook(run_id)


@shared_task
def prune_audit_log() -> None:
    """Sent daily by Celery beat (settings.CELERY_BEAT_SCHEDULE)."""
    pruning.prune()
