"""Handing background work to the broker: a send that may fail without losing anything.

The database row (a queued Turn, a DataFile being placed) is the truth and the broker's message
only a nudge; when the broker does not take it (Redis down) the row says so, and the reconciler
sends it again once the broker is back (analyst/turns/reconciler.py).
"""

from __future__ import annotations

import logging
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone
from kombu.exceptions import OperationalError
from redis.exceptions import RedisError

log = logging.getLogger(__name__)

BROKER_ERRORS = (OperationalError, RedisError, ConnectionError, TimeoutError)


def send(task: Any, *args: object) -> bool:
    """``task.delay(*args)``; False (logged) when the broker did not take it."""
    try:
        task.delay(*args)
    except BROKER_ERRORS as exc:
        log.warning("%s%s not sent (the broker is unreachable; it is sent later): %s", task.name, args, exc)
        return False
    return True


def resend(rows: QuerySet[Any], field: str, seen: object, task: Any, *args: object) -> bool:
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
