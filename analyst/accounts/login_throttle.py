"""Password-login throttling: failures counted per username and per client address in Redis.

Each attempt is counted before the password is checked, in one atomic step for both counters, so
parallel guesses cannot slip past the limit; an attempt refused is not counted. A successful login
takes its own attempt back from its address (other accounts' failures from there still count) and
clears its username's count. A counter lapses ANALYST_LOGIN_WINDOW seconds after its first
attempt. Counters are keyed on a hash of the username whether or not such an account exists, so
a refusal tells nothing about accounts. When Redis does not answer, logins are let through (and
logged): the throttle slows guessing, it does not decide who gets in.
"""

from __future__ import annotations

import hashlib
import ipaddress
import logging
from dataclasses import dataclass

import redis
from django.conf import settings
from django.http import HttpRequest

from analyst.lib.client_address import as_ip, forwarded_for
from analyst.lib.redis import key, redis_client

log = logging.getLogger(__name__)

# KEYS: the counters; ARGV[1]: the window; ARGV[1 + i]: KEYS[i]'s limit. Returns 0 when the
# attempt is allowed (and counted), else the seconds until the refusing counters lapse. A refused
# attempt is not counted: no password was checked, and it must not lock out an address's others.
_COUNT = """
local wait = 0
for i, key in ipairs(KEYS) do
  if tonumber(redis.call('GET', key) or '0') >= tonumber(ARGV[i + 1]) then
    local ttl = redis.call('TTL', key)
    if ttl < 0 then redis.call('EXPIRE', key, ARGV[1]); ttl = tonumber(ARGV[1]) end
    wait = math.max(wait, ttl, 1)
  end
end
if wait > 0 then return wait end
for _, key in ipairs(KEYS) do
  redis.call('INCR', key)
  if redis.call('TTL', key) < 0 then redis.call('EXPIRE', key, ARGV[1]) end
end
return 0
"""
# KEYS[1]: the username counter, KEYS[2] (if given): the address counter. DECR only a live
# counter: on a lapsed one it would make a -1 without expiry.
_SUCCEEDED = """
redis.call('DEL', KEYS[1])
if KEYS[2] and tonumber(redis.call('GET', KEYS[2]) or '0') > 0 then redis.call('DECR', KEYS[2]) end
"""


@dataclass(frozen=True)
class Verdict:
    refused: bool
    retry_after: int = 0  # seconds until the counter that refused lapses

    @property
    def message(self) -> str:
        minutes = max(1, -(-self.retry_after // 60))
        return (
            "Too many failed logins for this username or from this address. "
            f"Try again in {minutes} minute{'s' if minutes != 1 else ''}."
        )


ALLOWED = Verdict(refused=False)


def client_address(request: HttpRequest | None) -> str:
    """The client's address as counted (analyst/lib/client_address.py). IPv6 addresses count by
    their /64, which one client usually holds whole. "" when unknown."""
    if request is None:
        return ""
    raw = forwarded_for(request)
    address = as_ip(raw)
    if address is None:
        return raw[:100]
    if isinstance(address, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network(f"{address}/64", strict=False))
    return str(address)


def attempt(*, username: str, address: str) -> Verdict:
    """Count a login attempt for ``username`` from ``address``, unless either has used up its
    failures (a limit of 0 turns that counter off): then it is refused, and not counted."""
    counters = [(_key("user", username), settings.ANALYST_LOGIN_FAILURES)]
    if address:
        counters.append((_key("addr", address), settings.ANALYST_LOGIN_ADDRESS_FAILURES))
    counters = [(key, limit) for key, limit in counters if limit > 0]
    if not counters:
        return ALLOWED
    keys, limits = [k for k, _ in counters], [n for _, n in counters]
    try:
        wait = redis_client().eval(_COUNT, len(keys), *keys, settings.ANALYST_LOGIN_WINDOW, *limits)
    except redis.RedisError:
        log.warning("login throttle unavailable: an attempt was let through uncounted", exc_info=True)
        return ALLOWED
    return Verdict(refused=True, retry_after=int(wait)) if wait else ALLOWED


def succeeded(*, username: str, address: str) -> None:
    """A login as ``username`` from ``address`` succeeded: its attempt was no failure."""
    try:
        keys = [_key("user", username)] + ([_key("addr", address)] if address else [])
        redis_client().eval(_SUCCEEDED, len(keys), *keys)
    except redis.RedisError:
        log.warning("login throttle unavailable: a success was not recorded", exc_info=True)


def _key(kind: str, value: str) -> str:
    # Usernames compare case-insensitively here, so "Alice" and "alice" share one budget.
    digest = hashlib.sha256(value.casefold().encode()).hexdigest()[:32]
    return key("login", kind, digest)
