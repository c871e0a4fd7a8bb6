"""Our Redis keys, and a client that gives up quickly: health checks, metrics and login throttling
never wait on Redis."""

from __future__ import annotations

import functools

import redis
from django.conf import settings

# Seconds a connection or a command may take.
TIMEOUT = 1.0


def redis_client(url: str | None = None) -> redis.Redis:
    """A client of REDIS_URL (or ``url``) that gives up within TIMEOUT."""
    return _client(url or settings.REDIS_URL)


@functools.cache
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=TIMEOUT, socket_connect_timeout=TIMEOUT)


def key(*parts: str) -> str:
    """A Redis key of ours: ANALYST_REDIS_PREFIX keeps apart deployments that share a Redis."""
    return ":".join((settings.ANALYST_REDIS_PREFIX, *parts))
