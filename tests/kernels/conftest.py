"""Several sandboxd hosts on this machine (real processes sharing one token), and a real Celery
worker that knows them through SANDBOXD_HOSTS, for the tests of placement and of a lost host."""

from __future__ import annotations

import contextlib
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TEST_SETTINGS
from tests.fakes.model_server import ScriptedModelServer
from tests.integration.conftest import alice, api, session, worker_environment  # noqa: F401 (fixtures)
from tests.integration.test_resume_and_fork import run_cell  # noqa: F401 (the lost-host tests use it)
from tests.sandboxd_process import SandboxdProcess, free_port
from tests.worker_process import CeleryWorkerProcess


@contextlib.contextmanager
def sandboxd_hosts(count: int, settings: dict[str, str] | None = None) -> Iterator[list[SandboxdProcess]]:
    """``count`` sandboxd processes with one token (as the app sends one SANDBOXD_TOKEN to
    every host), each in a folder of its own; stopped and removed after the block."""
    token = secrets.token_urlsafe(24)
    bases = [Path(tempfile.mkdtemp(prefix=f"sandboxd-host{n}-")) for n in range(count)]
    hosts: list[SandboxdProcess] = []
    try:
        for base in bases:
            base.chmod(0o755)  # the unprivileged sandbox user must reach the workdirs below
            host = SandboxdProcess(
                data_dir=base / "data",
                log_path=base / "sandboxd.log",
                settings={**TEST_SETTINGS, **(settings or {})},
                token=token,
            )
            hosts.append(host)
            host.start()
        yield hosts
    finally:
        for host in hosts:
            host.stop()
        for base in bases:
            shutil.rmtree(base, ignore_errors=True)


def nowhere() -> str:
    """A sandboxd URL where nothing listens: a call that misses the session's host fails there."""
    return f"http://127.0.0.1:{free_port()}"


def host_of(hosts: list[SandboxdProcess], url: str) -> SandboxdProcess:
    return next(host for host in hosts if host.url == url)


@contextlib.contextmanager
def worker_on(
    hosts: list[SandboxdProcess], model_server: ScriptedModelServer
) -> Iterator[CeleryWorkerProcess]:
    """A worker whose sessions go to ``hosts``; its SANDBOXD_URL leads nowhere."""
    env = worker_environment(
        hosts[0],
        model_server,
        SANDBOXD_URL=nowhere(),
        SANDBOXD_HOSTS=",".join(host.url for host in hosts),
        ANALYST_DELTA_INTERVAL="0.05",
    )
    folder = Path(tempfile.mkdtemp(prefix="celery-hosts-"))
    process = CeleryWorkerProcess(log_path=folder / "worker.log", env=env, queues=env["CELERY_QUEUE"])
    process.start()
    try:
        yield process
    finally:
        process.stop()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def model_server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(expect_all_used=False) as server:
        yield server


def in_last_turn(log: list[dict[str, Any]], *types: str) -> list[dict[str, Any]]:
    last_start = max(i for i, e in enumerate(log) if e["type"] == "turn_started")
    return [e for e in log[last_start:] if e["type"] in types]


@pytest.fixture(scope="package")
def two_hosts() -> Iterator[list[SandboxdProcess]]:
    """Two hosts for the tests that leave them running (those that kill one start their own)."""
    with sandboxd_hosts(2) as hosts:
        yield hosts


@pytest.fixture
def on_hosts(settings: Any, two_hosts: list[SandboxdProcess], monkeypatch: pytest.MonkeyPatch) -> Any:
    """This process places sessions on ``two_hosts``; SANDBOXD_URL leads nowhere, so a call
    that is not sent to the session's own host fails."""
    settings.SANDBOXD_HOSTS = [host.url for host in two_hosts]
    settings.SANDBOXD_TOKEN = two_hosts[0].token
    settings.SANDBOXD_URL = nowhere()
    monkeypatch.setenv("SANDBOXD_URL", settings.SANDBOXD_URL)
    monkeypatch.setenv("SANDBOXD_TOKEN", two_hosts[0].token)
    return two_hosts


@contextlib.contextmanager
def lost_host_stack(
    settings: dict[str, str], model_server: ScriptedModelServer
) -> Iterator[list[SandboxdProcess]]:
    """Two hosts with ``settings`` and a worker that places sessions on them (one of them is
    killed by the test: each module that does so has its own)."""
    with sandboxd_hosts(2, settings) as hosts, worker_on(hosts, model_server):
        yield hosts
