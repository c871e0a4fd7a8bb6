"""The whole app in a real browser: the web server (uvicorn: pages, static files, WebSockets), a Celery
worker, Redis, sandboxd and a scripted model, driven by Playwright in Debian's Chromium.

Screenshots go to test-output/e2e/ (CI keeps that folder).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from tests.fakes.model_server import ScriptedModelServer
from tests.integration.conftest import database_url, kill_session_sandboxes
from tests.sandboxd_process import ROOT, SandboxdProcess, free_port
from tests.web_process import web_server
from tests.worker_process import CeleryWorkerProcess

CHROMIUM = "/usr/bin/chromium"
SCREENSHOTS = ROOT / "test-output" / "e2e"
MODELS = "anthropic/claude-test,openai/gpt-test"
SILENT_OLLAMA = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium")


@pytest.fixture(scope="package")
def model_server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(expect_all_used=False) as server:
        yield server


@pytest.fixture(scope="package")
def media() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="media-e2e-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="package")
def app_env(
    django_db_setup: None, sandboxd: SandboxdProcess, model_server: ScriptedModelServer, media: Path
) -> dict[str, str]:
    return app_environment(sandboxd, model_server, media)


def app_environment(
    sandboxd: SandboxdProcess, model_server: ScriptedModelServer, media: Path
) -> dict[str, str]:
    """What the web server and the worker share: this run's database, Redis, media, sandboxd."""
    return {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "e2e-tests",
        "DATABASE_URL": database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "CELERY_QUEUE": settings.CELERY_TASK_DEFAULT_QUEUE,
        "MEDIA_ROOT": str(media),
        "SANDBOXD_URL": sandboxd.url,
        "SANDBOXD_TOKEN": sandboxd.token,
        "ANALYST_MODELS": MODELS,
        "ANALYST_DEFAULT_MODEL": "anthropic/claude-test",
        "ANALYST_DELTA_INTERVAL": "0.05",
        **model_server.env(),
        "OLLAMA_BASE_URL": SILENT_OLLAMA,  # a session on ollama/* shows Send off, and why
    }


@pytest.fixture(scope="package")
def worker(app_env: dict[str, str]) -> Iterator[CeleryWorkerProcess]:
    folder = Path(tempfile.mkdtemp(prefix="celery-e2e-"))
    process = CeleryWorkerProcess(log_path=folder / "worker.log", env=app_env, queues=app_env["CELERY_QUEUE"])
    yield process.start()
    process.stop()


@pytest.fixture(scope="package")
def web(app_env: dict[str, str], worker: CeleryWorkerProcess) -> Iterator[str]:
    """The web server serving config.asgi on a free port; yields its base URL."""
    with web_server(app_env, name="e2e") as url:
        yield url


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop in this thread; the test's own ORM calls are
    # still plain blocking calls (as pytest-django's docs advise for Playwright).
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            yield chromium
            chromium.close()
    finally:
        del os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"]


@pytest.fixture
def stack(
    transactional_db: None, web: str, model_server: ScriptedModelServer, sandboxd: SandboxdProcess
) -> Iterator[ScriptedModelServer]:
    model_server.requests.clear()
    yield model_server
    kill_session_sandboxes(sandboxd)


@pytest.fixture
def shoot(request: pytest.FixtureRequest) -> Any:
    """shoot(page, "name"): a full-page screenshot in test-output/e2e/<test>-<name>.png."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def take(page: Any, name: str) -> Path:
        path = SCREENSHOTS / f"{request.node.name}-{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take


@pytest.fixture
def alice_login(browser: Any, web: str) -> Iterator[Any]:
    """alice_login(): a page logged in as a new user through the login form."""
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_user("alice", password="a-long-passphrase")
    contexts = []

    def login() -> Any:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        contexts.append(context)
        page = context.new_page()
        page.goto(f"{web}/accounts/login/")
        fill_login(page, "alice", "a-long-passphrase")
        page.wait_for_url(f"{web}/sessions/")
        return page

    yield login
    for context in contexts:
        context.close()


def fill_login(page: Any, username: str, password: str) -> None:
    """Sign in through the login form the page shows (the login page, or one it redirected to)."""
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("form[data-testid=login-form] button[type=submit]")
