"""Scheduled runs end to end: a real worker (whose reconciler reports ended runs), real beat where
a test needs it, a real SMTP server (aiosmtpd) and an HTTP server receiving webhooks, all on
loopback. The worker is this package's own (the integration package's fixture, given this
package's worker_env): it is told where the mail server is, and that a webhook may go to a
loopback address."""

from __future__ import annotations

import socket
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller

from tests.fakes.model_server import ScriptedModelServer
from tests.integration.conftest import alice, api, kill_session_sandboxes, session, worker, worker_environment
from tests.sandboxd_process import SandboxdProcess
from tests.worker_process import CeleryBeatProcess

__all__ = ["alice", "api", "session", "worker"]  # the fixtures used here as they are there


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Inbox:
    """What the SMTP server received: each message parsed, with its envelope's recipients."""

    messages: list[tuple[list[str], EmailMessage]] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 (aiosmtpd's name)
        parsed = message_from_bytes(envelope.content, policy=policy.default)
        self.messages.append((list(envelope.rcpt_tos), parsed))  # type: ignore[arg-type]
        return "250 Message accepted for delivery"


@dataclass
class Hook:
    path: str
    headers: dict[str, str]
    body: bytes


class WebhookServer:
    """Receives POSTs on loopback, answering each with the next scripted status (then 200)."""

    def __init__(self) -> None:
        self.received: list[Hook] = []
        self.statuses: list[int] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                server.received.append(Hook(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                status = server.statuses.pop(0) if server.statuses else 200
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


@pytest.fixture(scope="package")
def inbox() -> Iterator[tuple[Inbox, int]]:
    received, port = Inbox(), free_port()
    controller = Controller(received, hostname="127.0.0.1", port=port)
    controller.start()
    yield received, port
    controller.stop()


@pytest.fixture(scope="package")
def webhooks() -> Iterator[WebhookServer]:
    server = WebhookServer()
    yield server
    server.close()


@pytest.fixture(scope="package")
def model_server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(expect_all_used=False) as server:
        yield server


@pytest.fixture(scope="package")
def worker_env(
    django_db_setup: None,
    sandboxd: SandboxdProcess,
    model_server: ScriptedModelServer,
    inbox: tuple[Inbox, int],
) -> dict[str, str]:
    return worker_environment(
        sandboxd,
        model_server,
        ANALYST_RECONCILE_INTERVAL="0.5",
        ANALYST_WEBHOOK_PRIVATE_ADDRESSES="1",
        ANALYST_PUBLIC_URL="http://analyst.test",
        EMAIL_HOST="127.0.0.1",
        EMAIL_PORT=str(inbox[1]),
        DEFAULT_FROM_EMAIL="runs@analyst.test",
    )


@pytest.fixture
def beat(worker_env: dict[str, str]) -> Iterator[Any]:
    """Start (and restart) Celery beat with the worker's settings; stopped after the test."""
    folder = Path(tempfile.mkdtemp(prefix="celery-beat-"))
    started: list[CeleryBeatProcess] = []

    def start() -> CeleryBeatProcess:
        process = CeleryBeatProcess(log_path=folder / f"beat-{len(started)}.log", env=worker_env)
        started.append(process.start())
        return process

    yield start
    for process in started:
        process.stop()


@pytest.fixture
def stack(
    transactional_db: None,
    worker: object,
    sandboxd: SandboxdProcess,
    inbox: tuple[Inbox, int],
    webhooks: WebhookServer,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[tuple[Inbox, WebhookServer]]:
    monkeypatch.setenv("SANDBOXD_URL", sandboxd.url)
    monkeypatch.setenv("SANDBOXD_TOKEN", sandboxd.token)
    inbox[0].messages.clear()
    webhooks.received.clear()
    webhooks.statuses.clear()
    yield inbox[0], webhooks
    kill_session_sandboxes(sandboxd)
