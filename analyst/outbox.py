"""Handing background work to the broker: a send that may fail without losing anything.

The database row (a queued Turn, a DataFile being placed) is the truth and the broker's message
only a nudge; when the broker does not take it (Redis down) the row says so, and the reconciler
sends it again once the broker is back (analyst/reconciler.py).
"""

from __future__ import annotations

import logging
from typing import Any

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
