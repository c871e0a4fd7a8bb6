"""Who has a session open: every member's page hears each arrival and departure; an entry whose
socket died unheard lapses; a share link's reader is not counted and hears nothing of it."""

from __future__ import annotations

import pytest
import pytest_asyncio
from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from django.db import connections

from analyst.collab import presence
from analyst.models import ShareLink
from tests.collab.sockets import member_socket, next_of, open_socket
from tests.workspaces.conftest import user

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


@pytest_asyncio.fixture(autouse=True)
async def close_consumer_connections():
    yield
    await database_sync_to_async(connections.close_all)()


@pytest.fixture
def heartbeat(settings):
    settings.ANALYST_HEARTBEAT_INTERVAL = 600  # no tick in the way unless a test sets its own
    return settings


async def test_members_see_each_other_arrive_and_leave(heartbeat, session):
    olga, vic = await sync_to_async(user)("olga"), await sync_to_async(user)("vic")
    first = await member_socket(session, olga)
    assert (await next_of(first, "presence"))["users"] == ["olga"]
    second = await member_socket(session, vic)
    assert (await next_of(second, "presence"))["users"] == ["olga", "vic"]
    assert (await next_of(first, "presence"))["users"] == ["olga", "vic"]

    again = await member_socket(session, vic)  # a second tab: vic once in the list
    assert (await next_of(first, "presence"))["users"] == ["olga", "vic"]
    await again.disconnect()
    assert (await next_of(first, "presence"))["users"] == ["olga", "vic"]
    await second.disconnect()
    assert (await next_of(first, "presence"))["users"] == ["olga"]
    await first.disconnect()
    assert await sync_to_async(presence.present)(session.id) == []


async def test_a_client_that_did_not_ask_gets_events_and_heartbeats_only(heartbeat, session):
    olga = await sync_to_async(user)("olga")
    plain = await member_socket(session, olga, collab=False)
    seen = [(await plain.receive_json_from(timeout=5))["type"] for _ in range(5)]
    assert seen == ["user_message", "tool_call", "stdout", "assistant_message", "heartbeat"]
    assert await plain.receive_nothing(timeout=0.5)
    assert await sync_to_async(presence.present)(session.id) == ["olga"]  # counted all the same
    await plain.disconnect()


async def test_an_entry_whose_socket_died_unheard_lapses(settings, session):
    settings.ANALYST_HEARTBEAT_INTERVAL = 0.3
    olga = await sync_to_async(user)("olga")
    socket = await member_socket(session, olga)
    assert (await next_of(socket, "presence"))["users"] == ["olga"]
    # A socket of another process that was killed: noted once, never renewed, never removed.
    ghost = presence.entry("specific.killed!1", 999, "ghost")
    await sync_to_async(presence.do_enter)(session.id, ghost)
    assert (await next_of(socket, "presence"))["users"] == ["ghost", "olga"]
    assert (await next_of(socket, "presence"))["users"] == ["olga"]  # lapsed; olga's own is renewed
    await socket.disconnect()


async def test_a_share_links_reader_is_not_counted_and_hears_no_names(heartbeat, session):
    olga = await sync_to_async(user)("olga")
    link = await sync_to_async(ShareLink.objects.create)(session=session)
    reader = await open_socket(f"/ws/shared/{link.token}/")
    member = await member_socket(session, olga)
    assert (await next_of(member, "presence"))["users"] == ["olga"]
    seen = [(await reader.receive_json_from(timeout=5))["type"] for _ in range(5)]
    assert seen == ["user_message", "tool_call", "stdout", "assistant_message", "heartbeat"]
    assert await reader.receive_nothing(timeout=0.5)
    await member.disconnect()
    await reader.disconnect()
