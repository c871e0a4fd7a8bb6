"""Personas (alice owns, mallory is a stranger), their API clients, and the servers some tests need.

The worker and its scripted model server live for this package only (not the whole run), so no
worker of another package consumes our tasks, nor ours theirs.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from analyst.models import AnalysisSession, ApiToken
from tests.fakes.model_server import ScriptedModelServer
from tests.integration.conftest import LEASE_SECONDS, database_url
from tests.sandboxd_process import SandboxdProcess
from tests.web_process import web_server
from tests.worker_process import CeleryWorkerProcess

BOUNDARY = "api-test-boundary-7f3a"


# Personas and their clients.


@pytest.fixture
def alice(db: None) -> Any:
    return get_user_model().objects.create_user("alice")


@pytest.fixture
def mallory(db: None) -> Any:
    return get_user_model().objects.create_user("mallory")


def bearer_client(user: Any, **kwargs: Any) -> Client:
    _, secret = ApiToken.issue(user)
    return Client(HTTP_AUTHORIZATION=f"Bearer {secret}", **kwargs)


@pytest.fixture
def api(alice: Any) -> Client:
    return bearer_client(alice)


@pytest.fixture
def stranger_api(mallory: Any) -> Client:
    return bearer_client(mallory)


@pytest.fixture
def session(alice: Any) -> AnalysisSession:
    return AnalysisSession.objects.create(owner=alice, model="anthropic/claude-test")


@pytest.fixture
def media(settings: Any, tmp_path: Path) -> Path:
    """A MEDIA_ROOT of this test's own, so a test can see every file the code left in it."""
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def stored_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


# Uploads, sent as raw multipart: Django's test client would strip a path from the file name itself.


def multipart(filename: str, content: bytes, *, field: str = "file") -> bytes:
    quoted = filename.replace("\\", "\\\\").replace('"', '\\"')
    return (
        (
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{field}"; filename="{quoted}"\r\n'
            f"Content-Type: text/csv\r\n\r\n"
        ).encode()
        + content
        + f"\r\n--{BOUNDARY}--\r\n".encode()
    )


def upload(client: Client, session: AnalysisSession, filename: str, content: bytes, **kwargs: Any) -> Any:
    return client.post(
        f"/api/sessions/{session.id}/files",
        multipart(filename, content, **kwargs),
        content_type=f"multipart/form-data; boundary={BOUNDARY}",
    )


# The full stack: a real Celery worker, sandboxd (from tests/conftest.py), a scripted model.


def server_env(**extra: str) -> dict[str, str]:
    """What a separate process needs to share this run's test database, Redis and media."""
    return {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "api-tests",
        "DATABASE_URL": database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        **extra,
    }


@pytest.fixture(scope="package")
def model_server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(expect_all_used=False) as server:
        yield server


@pytest.fixture(scope="package")
def worker_media() -> Iterator[Path]:
    """The MEDIA_ROOT the worker and the stack's tests share; removed when the package is done."""
    folder = Path(tempfile.mkdtemp(prefix="media-api-test-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="package")
def worker(
    django_db_setup: None, sandboxd: SandboxdProcess, model_server: ScriptedModelServer, worker_media: Path
) -> Iterator[CeleryWorkerProcess]:
    queue = settings.CELERY_TASK_DEFAULT_QUEUE  # this run's own (see config/test_settings.py)
    env = server_env(
        CELERY_QUEUE=queue,
        MEDIA_ROOT=str(worker_media),
        SANDBOXD_URL=sandboxd.url,
        SANDBOXD_TOKEN=sandboxd.token,
        ANALYST_TURN_LEASE=str(LEASE_SECONDS),
        ANALYST_DELTA_INTERVAL="0.05",
        **model_server.env(),
    )
    folder = Path(tempfile.mkdtemp(prefix="celery-api-test-"))
    process = CeleryWorkerProcess(log_path=folder / "worker.log", env=env, queues=queue).start()
    yield process
    process.stop()


@pytest.fixture
def stack(
    transactional_db: None,
    worker: CeleryWorkerProcess,
    worker_media: Path,
    model_server: ScriptedModelServer,
    sandboxd: SandboxdProcess,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[ScriptedModelServer]:
    """Everything running; the test scripts the model. The web side finds sandboxd and media too."""
    settings.MEDIA_ROOT = worker_media
    monkeypatch.setenv("SANDBOXD_URL", sandboxd.url)
    monkeypatch.setenv("SANDBOXD_TOKEN", sandboxd.token)
    model_server.requests.clear()
    yield model_server


# A real ASGI server, for server-sent events.


@pytest.fixture(scope="package")
def asgi_server(django_db_setup: None) -> Iterator[str]:
    """The web server (config.asgi) on a free port, on the test database; yields its base URL."""
    with web_server(server_env(), name="api-test") as url:
        yield url
