"""sandboxd's GET /stats, what /healthz, /metrics and placement read: its sandboxes, warm pool and
memory, behind the service token like everything but /health."""

from __future__ import annotations

from pathlib import Path

import httpx

from sandboxes import Sandbox


def test_stats_need_the_token(sandboxd):
    assert httpx.get(f"{sandboxd.url}/stats", timeout=10).status_code == 401
    wrong = {"Authorization": "Bearer not-the-token"}
    assert httpx.get(f"{sandboxd.url}/stats", headers=wrong, timeout=10).status_code == 401


def test_stats_count_sandboxes_and_the_pool(sandboxd, make_sandbox):
    make_sandbox()
    make_sandbox()
    headers = {"Authorization": f"Bearer {sandboxd.token}"}
    stats = httpx.get(f"{sandboxd.url}/stats", headers=headers, timeout=10).json()
    listed = Sandbox.list(url=sandboxd.url, token=sandboxd.token)  # running and paused
    assert stats["sandboxes"] + stats["paused"] == len(listed)
    assert stats["sandboxes"] == len([s for s in listed if s.state == "running"]) >= 2
    assert stats["max_sandboxes"] == 64
    assert stats["pool"]["size"] == 1  # SANDBOXD_POOL_SIZE in tests/conftest.py
    assert set(stats["pool"]["ready"]) == {"code-interpreter"}
    assert stats["pool"]["ready"]["code-interpreter"] in (0, 1)


def test_stats_say_how_much_memory_the_host_has_available(sandboxd):
    """What the app places new sessions by (analyst/kernels/hosts.py): the host's MemAvailable."""
    headers = {"Authorization": f"Bearer {sandboxd.token}"}
    stats = httpx.get(f"{sandboxd.url}/stats", headers=headers, timeout=10).json()
    meminfo = Path("/proc/meminfo").read_text().splitlines()
    total = next(int(line.split()[1]) * 1024 for line in meminfo if line.startswith("MemTotal:"))
    assert isinstance(stats["memory_available"], int)
    assert 0 < stats["memory_available"] <= total
