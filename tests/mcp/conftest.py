"""MCP against the whole app: the web server (uvicorn, /mcp in config.asgi) or `manage.py mcp`
over stdio, a Celery worker, Redis, sandboxd and a scripted model, driven by the official MCP
client of the same SDK (``mcp.Client``), never by hand-written JSON-RPC."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx2
import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation

from analyst.models import ApiToken
from tests.e2e.conftest import app_environment
from tests.fakes.model_server import ScriptedModelServer
from tests.integration.conftest import kill_session_sandboxes
from tests.sandboxd_process import ROOT, SandboxdProcess
from tests.web_process import web_server
from tests.worker_process import CeleryWorkerProcess

CLIENT = Implementation(name="pytest-agent", version="1.0")
T = TypeVar("T")


@pytest.fixture(scope="package")
def model_server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(expect_all_used=False) as server:
        yield server


@pytest.fixture(scope="package")
def media() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="media-mcp-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="package")
def app_env(
    django_db_setup: None, sandboxd: SandboxdProcess, model_server: ScriptedModelServer, media: Path
) -> dict[str, str]:
    """What the web server, `manage.py mcp` and the worker share: the browser tests' set-up, with
    small MCP limits and a daily token budget."""
    return {
        **app_environment(sandboxd, model_server, media),
        "ANALYST_MAX_INPUT": "20000",
        "ANALYST_DAILY_TOKEN_BUDGET": "50000",
        "ANALYST_MCP_MAX_UPLOAD": str(64 << 10),
        "ANALYST_MCP_READ_LIMIT": str(16 << 10),
        "ANALYST_PUBLIC_URL": "http://analyst.example",
    }


@pytest.fixture(scope="package")
def worker(app_env: dict[str, str]) -> Iterator[CeleryWorkerProcess]:
    folder = Path(tempfile.mkdtemp(prefix="celery-mcp-"))
    process = CeleryWorkerProcess(log_path=folder / "worker.log", env=app_env, queues=app_env["CELERY_QUEUE"])
    yield process.start()
    process.stop()


@pytest.fixture(scope="package")
def web(app_env: dict[str, str], worker: CeleryWorkerProcess) -> Iterator[str]:
    with web_server(app_env, name="mcp") as url:
        yield url


@pytest.fixture
def stack(
    transactional_db: None, web: str, model_server: ScriptedModelServer, sandboxd: SandboxdProcess
) -> Iterator[ScriptedModelServer]:
    model_server.requests.clear()
    yield model_server
    kill_session_sandboxes(sandboxd)


async def off_the_loop(query: Callable[[], T]) -> T:
    """``query()`` (the ORM) in a worker thread, whose database connection is closed after: left
    open, it is garbage-collected with the thread, a ResourceWarning on Postgres."""

    def run() -> T:
        try:
            return query()
        finally:
            connection.close()

    return await asyncio.to_thread(run)


def token_of(username: str) -> str:
    user, _ = get_user_model().objects.get_or_create(username=username)
    return ApiToken.issue(user)[1]


@pytest.fixture
def alice_token(stack: ScriptedModelServer) -> str:
    return token_of("alice")


@contextlib.asynccontextmanager
async def http_client(
    web: str, token: str, *, statuses: list[int] | None = None, **options: Any
) -> AsyncIterator[Client]:
    """The official client over Streamable HTTP at /mcp, sending ``token`` as a bearer token;
    ``statuses`` collects the HTTP status of each response."""

    async def note(response: httpx2.Response) -> None:
        if statuses is not None:
            statuses.append(response.status_code)

    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=120, event_hooks={"response": [note]}) as http:
        transport = streamable_http_client(f"{web}/mcp", http_client=http)
        async with Client(transport, client_info=CLIENT, **options) as client:
            yield client


def stdio_parameters(app_env: dict[str, str], token: str) -> StdioServerParameters:
    """`python manage.py mcp` as a client starts it, with the token in ANALYST_API_TOKEN."""
    env = {**os.environ, **app_env, "ANALYST_API_TOKEN": token}
    return StdioServerParameters(command=sys.executable, args=["manage.py", "mcp"], env=env, cwd=str(ROOT))
