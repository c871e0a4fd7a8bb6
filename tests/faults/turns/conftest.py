"""Real Celery workers for the turn fault tests, on this run's queue, with short leases and a quick
reconciler; each test starts its own and may kill them (whole, or only their pool processes)."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from analyst import tasks
from analyst.models import ApiToken
from tests.fakes.model_server import ScriptedModelServer
from tests.faults.turns.workers import fault_worker_env
from tests.sandboxd_process import SandboxdProcess
from tests.worker_process import CeleryWorkerProcess

StartWorker = Callable[..., CeleryWorkerProcess]


@pytest.fixture
def fault_model() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(expect_all_used=False) as server:
        yield server


@pytest.fixture
def start_worker(
    transactional_db: None, sandboxd: SandboxdProcess, monkeypatch: pytest.MonkeyPatch
) -> Iterator[StartWorker]:
    """start_worker(model_server, **env): a worker on this run's queue; all are stopped after."""
    monkeypatch.setenv("SANDBOXD_URL", sandboxd.url)
    monkeypatch.setenv("SANDBOXD_TOKEN", sandboxd.token)
    folder = Path(tempfile.mkdtemp(prefix="celery-faults-"))
    started: list[CeleryWorkerProcess] = []

    def start(model_server: ScriptedModelServer, **env: str) -> CeleryWorkerProcess:
        log_path = folder / f"worker-{len(started)}.log"
        environment = {**fault_worker_env(sandboxd, model_server), **env}
        worker = CeleryWorkerProcess(
            log_path=log_path, env=environment, queues=settings.CELERY_TASK_DEFAULT_QUEUE
        )
        started.append(worker.start())
        return worker

    yield start
    for worker in started:
        worker.stop()


@pytest.fixture
def owner_api(transactional_db: None) -> tuple[Client, Any]:
    alice = get_user_model().objects.create_user("alice")
    _, secret = ApiToken.issue(alice)
    return Client(HTTP_AUTHORIZATION=f"Bearer {secret}"), alice


@pytest.fixture
def web_broker_on(faulty_redis: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """This test process publishes its tasks to the test's own Redis."""
    app = tasks.run_turn.app
    monkeypatch.setattr(app.conf, "broker_url", faulty_redis.url)
    monkeypatch.setattr(app, "_pool", None)
    monkeypatch.setattr(app.amqp, "_producer_pool", None)
    return faulty_redis
