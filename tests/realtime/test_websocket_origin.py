"""A WebSocket opens only from a page of this very site: its Origin must name the Host it was
opened to, port included (another app on 127.0.0.1 is another origin), or a CSRF trusted origin."""

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from analyst.models import ShareLink
from config.asgi import application
from tests.realtime.test_session_websocket import cookie_for

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def heartbeat_only_on_connect(settings):
    settings.ANALYST_HEARTBEAT_INTERVAL = 600


async def opens(path, *, origin, host=b"127.0.0.1:8000", user=None) -> bool:
    headers = [(b"host", host)] if host is not None else []
    if origin is not None:
        headers.append((b"origin", origin))
    if user is not None:
        headers.append((b"cookie", await sync_to_async(cookie_for)(user)))
    communicator = WebsocketCommunicator(application, path, headers)
    connected, _ = await communicator.connect()
    await communicator.disconnect()
    return connected


@pytest.mark.parametrize(
    ("origin", "host", "expected"),
    [
        (b"http://127.0.0.1:8000", b"127.0.0.1:8000", True),
        (b"https://127.0.0.1:8000", b"127.0.0.1:8000", True),  # TLS ended by a proxy in front
        (b"HTTP://LOCALHOST:8000", b"localhost:8000", True),
        (b"https://localhost", b"localhost", True),  # the default port on both sides
        (b"https://localhost:443", b"localhost", True),
        (b"http://127.0.0.1:9999", b"127.0.0.1:8000", False),  # another local app
        (b"http://127.0.0.1", b"127.0.0.1:8000", False),
        (b"http://localhost:8000", b"127.0.0.1:8000", False),
        (b"https://evil.example", b"127.0.0.1:8000", False),
        (b"http://evil.example:8000", b"evil.example:8000", False),  # DNS rebinding: not an allowed host
        (b"null", b"127.0.0.1:8000", False),  # a sandboxed frame or a file: page
        (b"http://127.0.0.1:notaport", b"127.0.0.1:8000", False),
        (b"http://127.0.0.1:8000", None, False),
        (None, b"127.0.0.1:8000", False),  # no Origin at all
    ],
)
async def test_only_the_sites_own_origin_opens_the_owners_socket(owner_and_session, origin, host, expected):
    owner, session = owner_and_session
    assert await opens(f"/ws/sessions/{session.id}/", origin=origin, host=host, user=owner) is expected


async def test_a_share_links_socket_is_checked_alike(owner_and_session):
    _, session = owner_and_session
    link = await sync_to_async(ShareLink.objects.create)(session=session)
    path = f"/ws/shared/{link.token}/"
    assert await opens(path, origin=b"http://127.0.0.1:8000")
    assert not await opens(path, origin=b"http://127.0.0.1:9999")
    assert not await opens(path, origin=None)


async def test_a_csrf_trusted_origin_opens_it(owner_and_session, settings):
    owner, session = owner_and_session
    settings.CSRF_TRUSTED_ORIGINS = ["https://analyst.example.com", "https://*.corp.example"]
    path = f"/ws/sessions/{session.id}/"
    assert await opens(path, origin=b"https://analyst.example.com", user=owner)
    assert await opens(path, origin=b"https://team.corp.example", user=owner)
    assert not await opens(path, origin=b"http://analyst.example.com", user=owner)  # another scheme
    assert not await opens(path, origin=b"https://analyst.example.com:8443", user=owner)
    assert not await opens(path, origin=b"https://corp.example.evil", user=owner)
