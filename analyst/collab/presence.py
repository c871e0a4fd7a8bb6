"""Who has a session open: an entry per open socket in a Redis sorted set, scored by the time it
lapses. The socket renews its entry at each heartbeat, so an entry whose process was killed (or a
Redis that restarted empty) heals by itself within LAPSE_HEARTBEATS heartbeats."""

from __future__ import annotations

import json
import time

from django.conf import settings

from analyst.lib.redis import key, redis_client

LAPSE_HEARTBEATS = 2.5  # heartbeats an entry outlives its last renewal by


def entry(socket: str, user_id: object, username: str) -> str:
    """The set member standing for one open socket of one user."""
    return json.dumps([socket, str(user_id), username])


def do_enter(session_id: object, member: str) -> None:
    """Note (or renew) the socket ``member`` (an ``entry``) as open on the session."""
    lapse = settings.ANALYST_HEARTBEAT_INTERVAL * LAPSE_HEARTBEATS
    pipe = redis_client().pipeline()
    pipe.zadd(_key(session_id), {member: time.time() + lapse})
    pipe.expire(_key(session_id), int(lapse) + 1)
    pipe.execute()


def do_leave(session_id: object, member: str) -> None:
    redis_client().zrem(_key(session_id), member)


def present(session_id: object) -> list[str]:
    """The usernames of everyone with the session open now, each once, sorted."""
    pipe = redis_client().pipeline()
    pipe.zremrangebyscore(_key(session_id), "-inf", time.time())
    pipe.zrange(_key(session_id), 0, -1)
    _, members = pipe.execute()
    return sorted({json.loads(member)[2] for member in members})


def _key(session_id: object) -> str:
    return key("presence", str(session_id))
