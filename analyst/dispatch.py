"""Starting background work: Celery tasks sent by name, by a send that may fail without losing anything.

Services start tasks through here, naming them, and never import the tasks module (which imports
the services): the worker that runs a task knows it by this name. The database row (a queued
Turn, a DataFile being placed) is the truth and the broker's message only a nudge; when the
broker does not take it (Redis down) the row says so, and the reconciler sends it again once the
broker is back (analyst/turns/reconciler.py).
"""

from __future__ import annotations

import logging
from typing import Any

from celery import current_app
from django.db.models import QuerySet
from django.utils import timezone
from kombu.exceptions import OperationalError
from redis.exceptions import RedisError

log = logging.getLogger(__name__)

RUN_TURN = "analyst.tasks.run_turn"
PLACE_FILE = "analyst.tasks.place_file"

BROKER_ERRORS = (OperationalError, RedisError, ConnectionError, TimeoutError)


def send(task: str, *args: object) -> bool:
    """Send the task named ``task`` with ``args``; False (logged) when the broker did not take it."""
    try:
        current_app.send_task(task, args=args)
    except BROKER_ERRORS as exc:
        log.warning("%s%s not sent (the broker is unreachable; it is sent later): %s", task, args, exc)
        return False
    return True


def resend(rows: QuerySet[Any], field: str, seen: object, task: str, *args: object) -> bool:
    """Send ``task`` again for the one row in ``rows``, unless another process did since it read
    ``field`` as ``seen``: this one's claim is setting it to now. False when another did, or the
    broker did not take it (``field`` then goes back to ``seen``, for the next pass)."""
    now = timezone.now()
    if not rows.filter(**{field: seen}).update(**{field: now}):
        return False
    if send(task, *args):
        return True
    rows.filter(**{field: now}).update(**{field: seen})
    return False
