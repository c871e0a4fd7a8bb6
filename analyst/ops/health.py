"""What /healthz checks: the database, Redis, sandboxd and the workers' heartbeats, each briefly.

Every check returns a ``Check``; none raises. A failed check says which part failed and why in
words that name no host, URL or secret (the full error goes to the log for the operator).

Workers call ``beat(hostname)`` every ``ANALYST_WORKER_BEAT`` seconds; the key it sets lapses
after three missed beats, so ``alive()`` lists the workers heard from recently.
"""

from __future__ import annotations

import concurrent.futures
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import redis
from django.conf import settings
from django.db import connections

from analyst.kernels import hosts as sandbox_hosts
from analyst.kernels.sandboxd_stats import SandboxdDown, sandboxd_stats
from analyst.lib.redis import key, redis_client

log = logging.getLogger(__name__)

# Seconds each check may take; /healthz answers within about this long whatever hangs.
TIMEOUT = 2.0
BEATS_BEFORE_LAPSE = 3


@dataclass
class Check:
    ok: bool
    error: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"ok": self.ok, **self.details}
        if self.error:
            body["error"] = self.error
        return body


# Worker heartbeats.


def beat(hostname: str) -> bool:
    """Say that the worker ``hostname`` is alive; False (logged) when Redis did not take it."""
    try:
        ttl = max(1, round(settings.ANALYST_WORKER_BEAT * BEATS_BEFORE_LAPSE))
        redis_client().set(key("worker", hostname), str(time.time()), ex=ttl)
    except redis.RedisError:
        log.warning("worker heartbeat of %s not stored", hostname, exc_info=True)
        return False
    return True


def alive() -> list[str]:
    """The hostnames of the workers that beat within the last few beat intervals."""
    prefix = key("worker", "")
    return sorted(k.decode()[len(prefix) :] for k in redis_client().scan_iter(match=prefix + "*", count=100))


# The checks.


def check_database() -> Check:
    connection = connections["default"]
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    finally:
        connection.close()  # this runs in a thread of its own; leave no connection behind
    return Check(ok=True)


def check_redis() -> Check:
    redis_client().ping()
    return Check(ok=True)


def check_sandboxd() -> Check:
    if settings.SANDBOXD_HOSTS:
        return check_sandboxd_hosts()
    try:
        sandboxd_stats(timeout=TIMEOUT)
    except SandboxdDown as exc:
        return Check(ok=False, error=str(exc))
    return Check(ok=True)


def check_sandboxd_hosts() -> Check:
    """Several hosts: healthy while one answers (new sessions go there), with how many do."""
    surveyed = sandbox_hosts.survey()
    details = {"hosts": len(surveyed), "healthy": sum(host.healthy for host in surveyed)}
    if not details["healthy"]:
        return Check(ok=False, error="no sandbox host answers", details=details)
    return Check(ok=True, details=details)


def check_worker() -> Check:
    count = len(alive())
    if not count:
        return Check(ok=False, error="no worker beat recently", details={"alive": "no", "count": 0})
    return Check(ok=True, details={"alive": "yes", "count": count})


CHECKS: dict[str, Callable[[], Check]] = {
    "database": check_database,
    "redis": check_redis,
    "sandboxd": check_sandboxd,
    "worker": check_worker,
}


def run_checks() -> dict[str, Check]:
    """Every check at once, each in a thread, none allowed past TIMEOUT (plus a little)."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=len(CHECKS), thread_name_prefix="healthz")
    futures = {name: pool.submit(_guarded, name, check) for name, check in CHECKS.items()}
    done, _ = concurrent.futures.wait(futures.values(), timeout=TIMEOUT + 1)
    pool.shutdown(wait=False)  # a hung check's thread ends with its own timeout; do not wait for it
    late = Check(ok=False, error="timed out")
    return {name: future.result() if future in done else late for name, future in futures.items()}


def _guarded(name: str, check: Callable[[], Check]) -> Check:
    try:
        return check()
    except Exception as exc:
        log.warning("health check %s failed", name, exc_info=True)
        return Check(ok=False, error=_reason(exc))


def _reason(exc: Exception) -> str:
    """Why, without the exception's text (which may name hosts, ports or credentials)."""
    if isinstance(exc, redis.TimeoutError | TimeoutError):
        return "timed out"
    if isinstance(exc, redis.ConnectionError | ConnectionError):
        return "unreachable"
    return f"failed ({type(exc).__name__})"
