"""The whole path: a real Celery worker on real Redis, a real sandboxd, a scripted model server.

The worker and the model server live for this package only, so no worker of another package
consumes our tasks (all of a run's tasks share its queue), nor ours theirs.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client

from analyst import dispatch
from analyst.models import AnalysisSession, ApiToken
from analyst.realtime import events
from sandboxes import Sandbox, SandboxError
from tests.celery_sends import send_with
from tests.fakes.model_server import ScriptedModelServer
from tests.sandboxd_process import SandboxdProcess
from tests.worker_process import CeleryWorkerProcess

LEASE_SECONDS = 3


def database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    host, port = db["HOST"] or "127.0.0.1", db["PORT"] or 5432
    return f"postgres://{db['USER']}:{db['PASSWORD']}@{host}:{port}/{db['NAME']}"


@pytest.fixture(scope="package")
def model_server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(expect_all_used=False) as server:
        yield server


def worker_environment(
    sandboxd: SandboxdProcess, model_server: ScriptedModelServer, **settings_: str
) -> dict[str, str]:
    """What a test's worker needs: this run's database, Redis, queue, media, sandboxd, model."""
    return {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "integration-tests",
        "DATABASE_URL": database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "CELERY_QUEUE": settings.CELERY_TASK_DEFAULT_QUEUE,
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "SANDBOXD_URL": sandboxd.url,
        "SANDBOXD_TOKEN": sandboxd.token,
        **settings_,
        **model_server.env(),
    }


@pytest.fixture(scope="package")
def worker_env(
    django_db_setup: None, sandboxd: SandboxdProcess, model_server: ScriptedModelServer
) -> dict[str, str]:
    return worker_environment(
        sandboxd, model_server, ANALYST_TURN_LEASE=str(LEASE_SECONDS), ANALYST_DELTA_INTERVAL="0.05"
    )


@pytest.fixture(scope="package")
def worker(worker_env: dict[str, str]) -> Iterator[CeleryWorkerProcess]:
    folder = Path(tempfile.mkdtemp(prefix="celery-test-"))
    queue = worker_env["CELERY_QUEUE"]
    process = CeleryWorkerProcess(log_path=folder / "worker.log", env=worker_env, queues=queue).start()
    yield process
    process.stop()


@pytest.fixture
def extra_worker(worker_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Start workers on a queue of their own (with changed settings); this test's turns go there."""
    queue = f"extra-{time.time_ns()}"
    send_with(monkeypatch, dispatch.RUN_TURN, queue=queue)
    folder = Path(tempfile.mkdtemp(prefix="celery-extra-"))
    started: list[CeleryWorkerProcess] = []

    def start(**env: str) -> CeleryWorkerProcess:
        log_path = folder / f"worker-{len(started)}.log"
        process = CeleryWorkerProcess(log_path=log_path, env={**worker_env, **env}, queues=queue)
        started.append(process.start())
        return process

    yield start
    for process in started:
        process.stop()


@pytest.fixture
def stack(
    transactional_db: None,
    worker: CeleryWorkerProcess,
    model_server: ScriptedModelServer,
    sandboxd: SandboxdProcess,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[ScriptedModelServer]:
    """Everything running; the test scripts the model. The web side's SDK finds sandboxd too."""
    monkeypatch.setenv("SANDBOXD_URL", sandboxd.url)
    monkeypatch.setenv("SANDBOXD_TOKEN", sandboxd.token)
    model_server.requests.clear()
    yield model_server
    kill_session_sandboxes(sandboxd)


def kill_session_sandboxes(sandboxd: SandboxdProcess) -> None:
    """The sandboxes the test's sessions made: gone, so that the run's shared sandboxd never
    reaches its cap (its sandboxes would otherwise live out their hour-long TTL)."""
    for sandbox_id in AnalysisSession.objects.exclude(sandbox_id="").values_list("sandbox_id", flat=True):
        try:
            with Sandbox.connect(sandbox_id, url=sandboxd.url, token=sandboxd.token):
                pass  # leaving it kills it, and closes our connection
        except SandboxError:
            pass  # gone already (the test killed it, or it expired)


@pytest.fixture
def alice() -> Any:
    return get_user_model().objects.create_user("alice", password="pw")


@pytest.fixture
def api(alice: Any) -> Client:
    _, secret = ApiToken.issue(alice)
    return Client(HTTP_AUTHORIZATION=f"Bearer {secret}")


@pytest.fixture
def session(alice: Any) -> AnalysisSession:
    return AnalysisSession.objects.create(owner=alice, model="anthropic/claude-test")


def wait_for(session: AnalysisSession, *types: str, timeout: float = 90) -> list[dict[str, Any]]:
    """All events so far, once one of ``types`` has arrived (turn endings by default)."""
    wanted = set(types) or {"turn_done", "turn_failed", "turn_cancelled"}
    deadline = time.monotonic() + timeout
    while True:
        stored = events.after(session.id, 0)
        if any(e["type"] in wanted for e in stored):
            return stored
        assert time.monotonic() < deadline, (
            f"no {wanted} within {timeout}s; got {[e['type'] for e in stored]}"
        )
        time.sleep(0.1)
