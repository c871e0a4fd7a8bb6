"""The sandboxd hosts (SANDBOXD_HOSTS): which answer, where a new sandbox goes, and which a
session's or a snapshot's is.

A host is healthy when its GET /stats answers within PROBE_TIMEOUT; each answer is remembered for
REMEMBERED seconds in the process, so placing many sessions costs one probe per host. A new
sandbox goes to the healthy host with the most memory available (as its /stats says). With no
SANDBOXD_HOSTS every sandbox is on SANDBOXD_URL and nothing here probes anything: a host is then
"", which the SDK resolves to SANDBOXD_URL, as rows from before hosts were recorded are.
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings

from analyst.kernels.sandboxd_stats import SandboxdDown, sandboxd_stats
from analyst.lib.per_process import PerProcess
from sandboxes import ServiceUnavailable

log = logging.getLogger(__name__)

PROBE_TIMEOUT = 1.0
REMEMBERED = 5.0


@dataclass(frozen=True)
class Host:
    url: str
    healthy: bool
    memory_available: int = 0  # bytes, as the host's /stats said
    error: str = ""  # why it is not healthy, in words that name no secret


class _Probes:
    """This process's latest answer of each host, with when it came."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.answers: dict[str, tuple[float, Host]] = {}


_probes = PerProcess(_Probes)


def configured() -> list[str]:
    """SANDBOXD_HOSTS; empty when every sandbox is on SANDBOXD_URL."""
    return list(settings.SANDBOXD_HOSTS)


def url(host: str) -> str | None:
    """What the SDK's ``url=`` takes for a recorded host: None ("" recorded) is SANDBOXD_URL."""
    return host or None


def probe(host: str, *, fresh: bool = False) -> Host:
    """Whether ``host`` ("" is SANDBOXD_URL) answers its /stats, and with how much memory free;
    an answer younger than REMEMBERED seconds is reused unless ``fresh``."""
    address = host or settings.SANDBOXD_URL.rstrip("/")
    probes = _probes.get()
    with probes.lock:
        known = probes.answers.get(address)
    if known is not None and not fresh and time.monotonic() - known[0] < REMEMBERED:
        return known[1]
    try:
        stats = sandboxd_stats(address, timeout=PROBE_TIMEOUT)
        answer = Host(address, True, int(stats.get("memory_available") or 0))
    except SandboxdDown as exc:
        answer = Host(address, False, error=str(exc))
    with probes.lock:
        probes.answers[address] = (time.monotonic(), answer)
    return answer


def survey() -> list[Host]:
    """Every configured host, probed at once (a host that hangs costs PROBE_TIMEOUT, not more)."""
    hosts = configured()
    if not hosts:
        return []
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(hosts), thread_name_prefix="probe") as pool:
        return list(pool.map(probe, hosts))


def choose(hosts: Sequence[Host], *, avoid: str = "") -> str:
    """The healthy host with the most memory available (the first listed among equals), other
    than ``avoid``. Raises ServiceUnavailable when there is none."""
    candidates = [h for h in hosts if h.healthy and h.url != avoid]
    if not candidates:  # users may read this: it names no host (the log has the probes' errors)
        log.warning("no sandbox host answers: %s", "; ".join(f"{h.url}: {h.error}" for h in hosts))
        raise ServiceUnavailable(f"no sandbox host answers (of {len(hosts)})")
    return max(candidates, key=lambda h: h.memory_available).url


def place(*, avoid: str = "") -> str:
    """The host a new sandbox goes to: "" (SANDBOXD_URL) without SANDBOXD_HOSTS, else
    choose(survey()). Raises ServiceUnavailable when no host answers."""
    if not configured():
        return ""
    return choose(survey(), avoid=avoid)


def place_restore(snapshot_host: str, *, avoid: str = "") -> str:
    """The host to restore a snapshot taken on ``snapshot_host`` on: that one while it answers
    (with local stores it alone has the snapshot's file), else place()."""
    if not configured():
        return ""
    if snapshot_host and snapshot_host != avoid and probe(snapshot_host).healthy:
        return snapshot_host
    return place(avoid=avoid)


def is_lost(host: str) -> bool:
    """Whether a session's host ("" is SANDBOXD_URL), which a request just failed to reach, is
    lost: there are several hosts (so the session may go on elsewhere) and it does not answer a
    probe made now."""
    return bool(configured()) and not probe(host, fresh=True).healthy
