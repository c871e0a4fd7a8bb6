"""One process at a time replaces a session's sandbox.

A turn and an upload's placement can both find the session's sandbox gone at the same moment
(or, in a new session, not made yet). Each restoring its own would leave two sandboxes, the
session pointing at whichever saved last, and the other's work lost with the other. The lock
lives in Redis, which every worker already reaches; it expires on its own if its holder dies.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

import redis
from django.conf import settings

from analyst.lib.per_process import PerProcess

log = logging.getLogger(__name__)

HOLD_SECONDS = 300  # a restore of a large snapshot, then the session's uploads written back

_redis = PerProcess(lambda: redis.Redis.from_url(settings.REDIS_URL))


@contextlib.contextmanager
def replacing_sandbox(session_id: object) -> Iterator[None]:
    """Hold the session's replacement lock for the ``with`` block. If Redis cannot be reached
    the block runs anyway (a second sandbox is a smaller harm than a failed turn)."""
    lock = _redis.get().lock(
        f"analyst:replace-sandbox:{session_id}", timeout=HOLD_SECONDS, blocking_timeout=HOLD_SECONDS
    )
    try:
        acquired = lock.acquire()
    except redis.RedisError as exc:
        log.warning("session %s: replacing its sandbox without the lock: %s", session_id, exc)
        acquired = False
    try:
        yield
    finally:
        if acquired:
            with contextlib.suppress(redis.RedisError):
                lock.release()
