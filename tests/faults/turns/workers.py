"""Helpers for the turn fault tests: worker settings, asking, waiting for a turn's events, killing
pool processes, and the event log's invariants."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

from django.test import Client

from analyst.models import AnalysisSession
from analyst.realtime import events
from tests.fakes.model_server import ScriptedModelServer
from tests.integration.conftest import worker_environment
from tests.sandboxd_process import SandboxdProcess
from tests.worker_process import CeleryWorkerProcess

# Short leases and a quick reconciler, so each fault is noticed in seconds.
FAULT_SETTINGS = {
    "ANALYST_TURN_LEASE": "3",
    "ANALYST_RECONCILE_INTERVAL": "0.5",
    "ANALYST_REQUEUE_AFTER": "2",
    "ANALYST_WORKER_BEAT": "1",
    "ANALYST_DELTA_INTERVAL": "0.05",
}
TERMINAL = ("turn_done", "turn_failed", "turn_cancelled")


def fault_worker_env(sandboxd: SandboxdProcess, model_server: ScriptedModelServer) -> dict[str, str]:
    return worker_environment(sandboxd, model_server, **FAULT_SETTINGS)


def new_session(owner: Any) -> AnalysisSession:
    return AnalysisSession.objects.create(owner=owner, model="anthropic/claude-test")


def ask(client: Client, session: AnalysisSession, text: str) -> int:
    response = client.post(f"/api/sessions/{session.id}/messages", {"content": text}, "application/json")
    assert response.status_code == 202, response.content
    return response.json()["turn"]


def wait_for_event(
    session: AnalysisSession, turn: int, *types: str, timeout: float = 30
) -> list[dict[str, Any]]:
    """The turn's events once one of ``types`` (its end, by default) is among them."""
    wanted = types or TERMINAL
    deadline = time.monotonic() + timeout
    while True:
        log = [e for e in events.after(session.id, 0) if e["turn"] == turn]
        if any(e["type"] in wanted for e in log):
            return log
        got = [e["type"] for e in log]
        assert time.monotonic() < deadline, f"turn {turn}: no {wanted} within {timeout} s; got {got}"
        time.sleep(0.1)


def pool_processes(worker: CeleryWorkerProcess) -> list[int]:
    """The pids of the worker's pool processes (its children)."""
    assert worker.process is not None
    children = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == worker.process.pid:
            children.append(int(entry.name))
    return children


def kill_pool_processes(worker: CeleryWorkerProcess) -> list[int]:
    """SIGKILL every pool process, as the OOM killer picks them; the worker itself lives on."""
    pids = pool_processes(worker)
    assert pids, "the worker has pool processes"
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    return pids


def assert_log_invariants(session: AnalysisSession) -> None:
    """Seqs gap-free from 1; every turn that started ends exactly once."""
    log = events.after(session.id, 0, limit=100_000)
    assert [e["seq"] for e in log] == list(range(1, len(log) + 1)), "seqs are gap-free"
    started = {e["turn"] for e in log if e["type"] == "turn_started"}
    ends: dict[int, int] = {}
    for event in log:
        if event["type"] in TERMINAL:
            ends[event["turn"]] = ends.get(event["turn"], 0) + 1
    assert all(ends.get(turn) == 1 for turn in started), f"one end per turn: {ends} for {started}"
    assert all(count == 1 for count in ends.values()), f"no turn ends twice: {ends}"
