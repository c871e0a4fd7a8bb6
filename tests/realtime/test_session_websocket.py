"""The session's WebSocket: the owner gets the log from its last seq, then live; nobody else does."""

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import Client

from analyst.models import ShareLink
from analyst.realtime import events
from analyst.sessions import shares
from config.asgi import application

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def heartbeat_only_on_connect(settings):
    """The socket's tick has tests of its own (test_heartbeats.py); here it stays out of the way."""
    settings.ANALYST_HEARTBEAT_INTERVAL = 600


async def next_event(communicator, timeout=1):
    """The next frame that is not a heartbeat."""
    while (frame := await communicator.receive_json_from(timeout=timeout))["type"] == "heartbeat":
        pass
    return frame


async def no_event(communicator, timeout=0.3, interval=0.01):
    """Nothing but heartbeats arrives within ``timeout``."""
    while not await communicator.receive_nothing(timeout=timeout, interval=interval):
        if (await communicator.receive_json_from())["type"] != "heartbeat":
            return False
    return True


def cookie_for(user) -> bytes:
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


async def connect(session_id, user=None, *, after=0, origin=b"http://127.0.0.1:8000"):
    headers = [(b"origin", origin), (b"host", b"127.0.0.1:8000")]
    if user is not None:
        headers.append((b"cookie", await sync_to_async(cookie_for)(user)))
    communicator = WebsocketCommunicator(application, f"/ws/sessions/{session_id}/?after={after}", headers)
    connected, code = await communicator.connect()
    return communicator, connected, code


async def test_replay_after_the_last_seq_then_live(owner_and_session):
    owner, session = owner_and_session
    communicator, connected, _ = await connect(session.id, owner, after=1)
    assert connected
    assert [(await next_event(communicator))["seq"] for _ in range(2)] == [2, 3]

    await sync_to_async(events.append)(session.id, "stdout", {"text": "live\n"})
    live = await next_event(communicator, timeout=5)
    assert (live["seq"], live["payload"]) == (4, {"text": "live\n"})
    assert await no_event(communicator, timeout=0.3)
    await communicator.disconnect()


@pytest.mark.slow
async def test_a_socket_idle_for_longer_than_the_layers_blocking_pop_still_gets_events(owner_and_session):
    """channels_redis waits on Redis in blocking pops of 5 s; a Redis client whose read timeout is
    no longer than that (redis-py's default since 6 is 5 s) fails the wait and ends the consumer."""
    owner, session = owner_and_session
    communicator, connected, _ = await connect(session.id, owner, after=3)
    assert connected
    assert await no_event(communicator, timeout=12, interval=0.5)
    await sync_to_async(events.append)(session.id, "stdout", {"text": "after a while\n"})
    live = await next_event(communicator, timeout=5)
    assert (live["seq"], live["payload"]) == (4, {"text": "after a while\n"})
    await communicator.disconnect()


async def test_asking_again_replays_without_duplicates(owner_and_session):
    owner, session = owner_and_session
    communicator, connected, _ = await connect(session.id, owner, after=3)
    assert connected and await no_event(communicator, timeout=0.3)
    await communicator.send_json_to({"after": 1})
    assert [(await next_event(communicator))["seq"] for _ in range(2)] == [2, 3]
    assert await no_event(communicator, timeout=0.3)
    await communicator.disconnect()


async def test_strangers_and_anonymous_visitors_are_refused(owner_and_session):
    _, session = owner_and_session
    stranger = await sync_to_async(get_user_model().objects.create_user)("stranger")
    for user in (stranger, None):
        communicator, connected, code = await connect(session.id, user)
        assert not connected and code == 4404
        await communicator.disconnect()


async def test_another_sites_origin_is_refused(owner_and_session):
    owner, session = owner_and_session
    communicator, connected, _ = await connect(session.id, owner, origin=b"https://evil.example")
    assert not connected
    await communicator.disconnect()


async def shared(token, *, after=0):
    headers = [(b"origin", b"http://127.0.0.1:8000"), (b"host", b"127.0.0.1:8000")]
    communicator = WebsocketCommunicator(application, f"/ws/shared/{token}/?after={after}", headers)
    connected, code = await communicator.connect()
    return communicator, connected, code


async def test_a_share_link_streams_to_anyone_until_revoked(owner_and_session):
    _, session = owner_and_session
    link = await sync_to_async(ShareLink.objects.create)(session=session)
    communicator, connected, _ = await shared(link.token)
    assert connected
    assert [(await next_event(communicator))["seq"] for _ in range(3)] == [1, 2, 3]
    await sync_to_async(events.append)(session.id, "stdout", {"text": "live\n"})
    assert (await next_event(communicator, timeout=5))["seq"] == 4
    await communicator.send_json_to({"code": "import os"})  # nothing but a replay request is heard
    assert await no_event(communicator, timeout=0.3)

    await sync_to_async(shares.do_revoke)(session=session, link_id=link.id)
    closed = await communicator.receive_output(timeout=5)  # the open stream ends at once
    assert closed == {"type": "websocket.close", "code": 4404}
    await communicator.disconnect()
    for token in (link.token, "not-a-token"):
        communicator, connected, code = await shared(token)
        assert not connected and code == 4404
        await communicator.disconnect()


async def test_a_long_absence_replays_everything(owner_and_session):
    owner, session = owner_and_session
    for n in range(1002):  # more than one batch of the log
        await sync_to_async(events.append)(session.id, "stdout", {"text": f"{n}\n"})
    communicator, connected, _ = await connect(session.id, owner, after=0)
    assert connected
    seqs = [(await next_event(communicator, timeout=5))["seq"] for _ in range(1005)]
    assert seqs == list(range(1, 1006))
    await communicator.disconnect()
