"""Fault injection: real servers, and a Redis of the test's own that it may restart or stop."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from analyst.models import AnalysisSession
from tests.faults.websocket_client import WebSocket
from tests.integration.conftest import database_url
from tests.redis_process import RedisProcess
from tests.web_process import web_server

HEARTBEAT_SECONDS = 0.5  # the live views' tick in these tests


@pytest.fixture
def faulty_redis() -> Iterator[RedisProcess]:
    """A Redis only this test uses: restart() empties it, as a restart of a Redis that keeps nothing."""
    process = RedisProcess().start()
    yield process
    process.stop()


@pytest.fixture
def faulty_redis_layer(faulty_redis: RedisProcess, settings: Any) -> RedisProcess:
    """This test process broadcasts (events.append) through the test's own Redis too."""
    layers = copy.deepcopy(settings.CHANNEL_LAYERS)
    layers["default"]["CONFIG"]["hosts"][0]["address"] = faulty_redis.url
    settings.CHANNEL_LAYERS = layers
    return faulty_redis


@pytest.fixture
def web_on_faulty_redis(
    transactional_db: None, faulty_redis_layer: RedisProcess, settings: Any
) -> Iterator[str]:
    """The web server on the test database and the test's own Redis, ticking every HEARTBEAT_SECONDS;
    yields its ws:// base URL."""
    env = {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": settings.SECRET_KEY,  # the login cookies the test makes must hold there
        "DATABASE_URL": database_url(),
        "REDIS_URL": faulty_redis_layer.url,
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "ANALYST_HEARTBEAT_INTERVAL": str(HEARTBEAT_SECONDS),
    }
    with web_server(env, name="faults") as url:
        yield url.replace("http://", "ws://")


@pytest.fixture
def live_view_session(transactional_db: None) -> tuple[Any, AnalysisSession]:
    owner = get_user_model().objects.create_user("owner")
    return owner, AnalysisSession.objects.create(owner=owner, model="anthropic/claude-test")


@pytest.fixture
def open_live_view(web_on_faulty_redis: str) -> Iterator[Callable[..., WebSocket]]:
    """open_live_view(path, user=None, after=0): a WebSocket to the test's web server, closed after."""
    opened: list[WebSocket] = []

    def open_socket(path: str, user: Any = None, *, after: int = 0) -> WebSocket:
        headers = {"Origin": web_on_faulty_redis.replace("ws://", "http://")}
        if user is not None:
            client = Client()
            client.force_login(user)
            headers["Cookie"] = f"sessionid={client.cookies['sessionid'].value}"
        socket = WebSocket(f"{web_on_faulty_redis}{path}?after={after}", headers=headers)
        opened.append(socket)
        return socket

    yield open_socket
    for socket in opened:
        socket.close()
