"""A live view's tick: a heartbeat on connect and every ANALYST_HEARTBEAT_INTERVAL, saying the last
seq sent; what the layer never delivered comes from the log; a link revoked unheard still ends."""

import pytest
from asgiref.sync import sync_to_async
from django.utils import timezone

from analyst.models import AnalysisSession, Event, ShareLink
from tests.realtime.test_session_websocket import connect, shared

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

INTERVAL = 0.5


@pytest.fixture(autouse=True)
def quick_heartbeats(settings):
    settings.ANALYST_HEARTBEAT_INTERVAL = INTERVAL


async def test_a_heartbeat_on_connect_then_every_interval_says_the_last_seq_sent(owner_and_session):
    owner, session = owner_and_session
    communicator, connected, _ = await connect(session.id, owner, after=1)
    assert connected
    replayed = [(await communicator.receive_json_from(timeout=5))["seq"] for _ in range(2)]
    on_connect = await communicator.receive_json_from(timeout=5)
    after_an_interval = await communicator.receive_json_from(timeout=5)
    assert replayed == [2, 3]
    assert on_connect == after_an_interval == {"type": "heartbeat", "seq": 3, "interval": INTERVAL}
    await communicator.disconnect()


async def test_an_event_the_layer_never_delivered_comes_at_the_next_tick(owner_and_session):
    owner, session = owner_and_session
    communicator, connected, _ = await connect(session.id, owner, after=3)
    assert connected
    assert (await communicator.receive_json_from(timeout=5))["type"] == "heartbeat"

    def store_without_broadcast():  # as when the broadcast was lost
        Event.objects.create(session=session, seq=4, type="stdout", payload={"text": "unheard"})
        AnalysisSession.objects.filter(id=session.id).update(next_seq=5)

    await sync_to_async(store_without_broadcast)()
    while (frame := await communicator.receive_json_from(timeout=5))["type"] == "heartbeat":
        assert frame["seq"] == 3
    assert (frame["seq"], frame["payload"]) == (4, {"text": "unheard"})
    heartbeat = await communicator.receive_json_from(timeout=5)
    assert heartbeat == {"type": "heartbeat", "seq": 4, "interval": INTERVAL}
    await communicator.disconnect()


async def test_a_link_revoked_unheard_ends_its_sockets_at_the_next_tick(owner_and_session):
    _, session = owner_and_session
    link = await sync_to_async(ShareLink.objects.create)(session=session)
    communicator, connected, _ = await shared(link.token, after=3)
    assert connected
    assert (await communicator.receive_json_from(timeout=5))["type"] == "heartbeat"
    # Revoked in the database, its broadcast lost (say, Redis restarted in between).
    await sync_to_async(ShareLink.objects.filter(id=link.id).update)(revoked_at=timezone.now())
    while (output := await communicator.receive_output(timeout=5))["type"] == "websocket.send":
        pass
    assert output == {"type": "websocket.close", "code": 4404}
    await communicator.disconnect()
