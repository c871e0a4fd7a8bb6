"""Celery tasks: thin wrappers that pass ids to the turn services."""

from __future__ import annotations

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings

from analyst import turns, uploads


@shared_task(
    acks_late=True,
    soft_time_limit=settings.ANALYST_TURN_TIMEOUT,
    time_limit=settings.ANALYST_TURN_TIMEOUT + 30,
)
def run_turn(turn_id: int) -> None:
    turns.execute(turn_id)


@shared_task
def fail_orphaned_turns() -> int:
    return turns.fail_orphans()


@worker_ready.connect
def _sweep_on_start(**_: object) -> None:
    """A worker that starts after a crash ends the turns its predecessor left running."""
    fail_orphaned_turns.apply_async(countdown=settings.ANALYST_TURN_LEASE + 1)


@shared_task(acks_late=True, soft_time_limit=300, time_limit=330)
def place_file(data_file_id: int) -> None:
    uploads.place(data_file_id)
