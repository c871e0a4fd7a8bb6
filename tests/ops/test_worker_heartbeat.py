"""A real Celery worker beats from its start: /healthz counts it, and once it stops its beat
lapses and /healthz says no worker is alive."""

from __future__ import annotations

import shutil
import tempfile
import time
import uuid
from pathlib import Path

import pytest
from django.conf import settings

from analyst.ops import health
from tests.integration.conftest import database_url
from tests.worker_process import CeleryWorkerProcess

pytestmark = pytest.mark.slow


def wait_until(condition, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "gave up waiting"
        time.sleep(0.2)


def test_a_worker_beats_and_its_beat_lapses_when_it_stops(
    client, transactional_db, redis_keys, with_sandboxd
):
    queue = f"ops-beat-{uuid.uuid4().hex[:8]}"
    env = {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "ops-tests",
        "DATABASE_URL": database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "CELERY_QUEUE": queue,
        "ANALYST_REDIS_PREFIX": redis_keys,
        "ANALYST_WORKER_BEAT": "1",
    }
    folder = Path(tempfile.mkdtemp(prefix="celery-ops-test-"))
    worker = CeleryWorkerProcess(log_path=folder / "worker.log", env=env, queues=queue).start()
    try:
        wait_until(health.alive)
        body = client.get("/healthz").json()
        assert body["checks"]["worker"] == {"ok": True, "alive": "yes", "count": 1}, worker.read_log()
        assert body["status"] == "ok"
    finally:
        worker.stop()
        shutil.rmtree(folder, ignore_errors=True)
    wait_until(lambda: not health.alive(), seconds=30)  # three missed beats of one second
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["failing"] == ["worker"]
