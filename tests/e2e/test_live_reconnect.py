"""A live view that goes silent without closing (here: the web server paused with SIGSTOP for
longer than the page's liveness bound) is given up by the page, which reconnects and shows what
was said meanwhile; a heartbeat that says more was sent than the page got makes it ask again."""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from analyst.models import AnalysisSession
from analyst.realtime import events
from tests.integration.conftest import database_url
from tests.web_process import web_server

HEARTBEAT_SECONDS = 1  # so the page gives up after 2.5 s of silence


@pytest.fixture(scope="module")
def pausable_web(django_db_setup: None) -> Iterator[tuple[str, int]]:
    """A web server of this module's own, heartbeating every second: (base URL, its pid)."""
    env = {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": settings.SECRET_KEY,  # the login cookie the test makes must hold there
        "DATABASE_URL": database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "ANALYST_HEARTBEAT_INTERVAL": str(HEARTBEAT_SECONDS),
    }
    with web_server(env, name="e2e-reconnect") as url:
        yield url, web_server_pid(int(url.rsplit(":", 1)[1]))


def web_server_pid(port: int) -> int:
    """Our child web server (scripts/web execs uvicorn) serving ``port``."""
    for proc in Path("/proc").iterdir():
        try:
            args = (proc / "cmdline").read_bytes().split(b"\0")
            parent = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if parent == os.getpid() and any(a.endswith(b"uvicorn") for a in args) and str(port).encode() in args:
            return int(proc.name)
    raise LookupError(f"no web server of ours on port {port}")


@pytest.fixture
def owner_context(transactional_db: None, pausable_web: tuple[str, int], browser: Any) -> Iterator[Any]:
    """(a session with one notice, a browser context logged in as its owner)."""
    url, _ = pausable_web
    owner = get_user_model().objects.create_user("alice")
    session = AnalysisSession.objects.create(owner=owner, model="anthropic/claude-test")
    events.append(session.id, "notice", {"text": "before the pause"})
    client = Client()
    client.force_login(owner)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": url}])
    yield session, context
    context.close()


def test_a_silent_socket_is_given_up_and_the_page_catches_up(
    pausable_web: tuple[str, int], owner_context: Any, shoot: Any
) -> None:
    from playwright.sync_api import expect

    url, pid = pausable_web
    session, context = owner_context
    page = context.new_page()
    sockets: list[Any] = []
    page.on("websocket", lambda socket: sockets.append(socket))  # noqa: PLW0108 (no builtins)
    page.goto(f"{url}/sessions/{session.id}/")
    status = page.get_by_test_id("connection-status")
    expect(status).to_have_attribute("data-state", "live", timeout=15_000)
    expect(page.get_by_test_id("notice")).to_have_text(["before the pause"])

    os.kill(pid, signal.SIGSTOP)  # the socket stays open, and says nothing
    try:
        events.append(session.id, "notice", {"text": "said during the pause"})
        expect(status).to_have_attribute("data-state", "reconnecting", timeout=15_000)
        shoot(page, "silent")
    finally:
        os.kill(pid, signal.SIGCONT)

    expect(status).to_have_attribute("data-state", "live", timeout=15_000)
    expect(page.get_by_test_id("notice")).to_have_text(["before the pause", "said during the pause"])
    assert len(sockets) >= 2  # a new socket, not the old one woken up
    events.append(session.id, "notice", {"text": "after"})
    expect(page.get_by_test_id("notice")).to_have_count(3, timeout=15_000)


def test_an_event_lost_on_the_way_is_asked_for_at_the_next_heartbeat(
    pausable_web: tuple[str, int], owner_context: Any
) -> None:
    from playwright.sync_api import expect

    url, _ = pausable_web
    session, context = owner_context
    page = context.new_page()
    dropped: list[str] = []

    def lose_one_frame(page_side: Any) -> None:  # between the page and the real server
        server = page_side.connect_to_server()
        page_side.on_message(server.send)

        def to_page(message: str) -> None:
            if "lost on the way" in message and not dropped:
                dropped.append(message)
            else:
                page_side.send(message)

        server.on_message(to_page)

    page.route_web_socket(re.compile(r"/ws/sessions/"), lose_one_frame)
    page.goto(f"{url}/sessions/{session.id}/")
    expect(page.get_by_test_id("connection-status")).to_have_attribute("data-state", "live", timeout=15_000)
    expect(page.get_by_test_id("notice")).to_have_text(["before the pause"])

    events.append(session.id, "notice", {"text": "lost on the way"})  # the last event: no gap shows
    notices = page.get_by_test_id("notice")
    expect(notices).to_have_text(["before the pause", "lost on the way"], timeout=15_000)
    assert dropped
