"""What a share viewer can make the server send is bounded: a replay sends at most a page (a
viewer further behind is told to catch up over HTTP), and replay requests are answered at most
once a second, a few a minute; a viewer who keeps asking is closed. A 19-byte {"after": 0}
replayed the whole log, as often as it was sent (x1342 on a real session's log)."""

import asyncio

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from analyst.models import ShareLink
from analyst.realtime import events
from analyst.web import consumers
from analyst.web.consumers import CATCH_UP, SHARE_REPLAY_PAGE, TOO_MANY_REPLAYS
from config.asgi import application
from tests.realtime.test_session_websocket import connect, next_event, no_event

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def heartbeat_only_on_connect(settings):
    settings.ANALYST_HEARTBEAT_INTERVAL = 600


async def shared(session, *, after=0):
    link = await sync_to_async(ShareLink.objects.create)(session=session)
    headers = [(b"origin", b"http://127.0.0.1:8000"), (b"host", b"127.0.0.1:8000")]
    communicator = WebsocketCommunicator(application, f"/ws/shared/{link.token}/?after={after}", headers)
    connected, _ = await communicator.connect()
    assert connected
    return communicator


async def closed_with(communicator, timeout=5):
    """The close code of the next frame that is not a heartbeat or an event."""
    while (frame := await communicator.receive_output(timeout=timeout))["type"] == "websocket.send":
        pass
    assert frame["type"] == "websocket.close"
    return frame.get("code")


@sync_to_async
def add_events(session, count):
    for n in range(count):
        events.append(session.id, "stdout", {"text": f"{n}\n"})


async def test_replay_requests_are_answered_at_most_once_a_second_then_the_socket_closes(owner_and_session):
    _, session = owner_and_session
    communicator = await shared(session, after=3)
    await communicator.send_json_to({"after": 0})
    assert [(await next_event(communicator))["seq"] for _ in range(3)] == [1, 2, 3]
    for _ in range(5):
        await communicator.send_json_to({"after": 0})
    assert await no_event(communicator, timeout=0.5)  # ignored: asked again within the second

    await asyncio.sleep(1.1)
    await communicator.send_json_to({"after": 2})
    assert (await next_event(communicator))["seq"] == 3
    assert await no_event(communicator, timeout=0.3)

    for _ in range(40):  # 19 bytes each
        await communicator.send_json_to({"after": 0})
    assert await closed_with(communicator) == TOO_MANY_REPLAYS
    await communicator.disconnect()


async def test_a_few_replays_a_minute_beyond_one_per_heartbeat(owner_and_session, settings, monkeypatch):
    _, session = owner_and_session
    settings.ANALYST_HEARTBEAT_INTERVAL = 30  # two a minute, and five more
    monkeypatch.setattr(consumers, "SHARE_REPLAY_GAP", 0.1)  # the budget under test, not the gap
    communicator = await shared(session, after=3)
    answered = 0
    for _ in range(9):
        await communicator.send_json_to({"after": 2})
        if not await no_event(communicator, timeout=0.2):
            answered += 1
            await asyncio.sleep(0.2)
    assert answered == 7
    await communicator.disconnect()


async def test_one_replay_sends_at_most_a_page_then_says_to_catch_up_over_http(owner_and_session):
    _, session = owner_and_session
    await add_events(session, SHARE_REPLAY_PAGE)  # 3 + a page in the log
    communicator = await shared(session, after=0)
    seqs = [(await next_event(communicator))["seq"] for _ in range(SHARE_REPLAY_PAGE)]
    assert seqs == list(range(1, SHARE_REPLAY_PAGE + 1))
    assert await closed_with(communicator) == CATCH_UP
    await communicator.disconnect()

    caught_up = await shared(session, after=SHARE_REPLAY_PAGE + 3)
    assert await no_event(caught_up, timeout=0.3)
    await caught_up.send_json_to({"after": 0})
    assert [(await next_event(caught_up))["seq"] for _ in range(SHARE_REPLAY_PAGE)][-1] == SHARE_REPLAY_PAGE
    assert await closed_with(caught_up) == CATCH_UP
    await caught_up.disconnect()


async def test_the_owners_socket_is_not_limited(owner_and_session):
    owner, session = owner_and_session
    await add_events(session, SHARE_REPLAY_PAGE)
    communicator, connected, _ = await connect(session.id, owner, after=SHARE_REPLAY_PAGE + 3)
    assert connected
    for _ in range(2):
        await communicator.send_json_to({"after": 0})
        seqs = [(await next_event(communicator))["seq"] for _ in range(SHARE_REPLAY_PAGE + 3)]
        assert seqs == list(range(1, SHARE_REPLAY_PAGE + 4))
    await communicator.disconnect()
