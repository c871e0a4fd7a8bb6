"""A comment reaches every open page of its session at once, with the unread count of whom it
notifies; a share link's reader sees none of it."""

from __future__ import annotations

import pytest
import pytest_asyncio
from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from django.db import connections

from analyst.models import ShareLink
from tests.collab.sockets import each_of, member_socket, next_of, open_socket
from tests.workspaces.conftest import client_of, user

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


@pytest_asyncio.fixture(autouse=True)
async def close_consumer_connections(settings):
    settings.ANALYST_HEARTBEAT_INTERVAL = 600
    yield
    await database_sync_to_async(connections.close_all)()


def post_comment(session, name, text):
    made = client_of(name).post(
        f"/api/sessions/{session.id}/comments", {"seq": 4, "text": text}, "application/json"
    )
    assert made.status_code == 201, made.content
    return made.json()


def delete_comment(session, name, comment_id):
    assert client_of(name).delete(f"/api/sessions/{session.id}/comments/{comment_id}").status_code == 204


async def test_a_comment_reaches_every_open_page_and_the_notified_count(session):
    eve, vic = await sync_to_async(user)("eve"), await sync_to_async(user)("vic")
    owner, author = await member_socket(session, eve), await member_socket(session, vic)
    link = await sync_to_async(ShareLink.objects.create)(session=session)
    reader = await open_socket(f"/ws/shared/{link.token}/")

    made = await sync_to_async(post_comment)(session, "vic", "Net of returns?")
    heard = await each_of(owner, "comment", "notifications")
    assert (heard["comment"]["comment"], heard["notifications"]["unread"]) == (made, 1)
    assert (await next_of(author, "comment"))["comment"] == made  # and no count: vic wrote it

    await sync_to_async(delete_comment)(session, "vic", made["id"])
    assert await next_of(owner, "comment_removed") == {"type": "comment_removed", "id": made["id"]}

    frames = []
    while not await reader.receive_nothing(timeout=0.5):
        frames.append((await reader.receive_json_from())["type"])
    assert "comment" not in frames and "comment_removed" not in frames and "presence" not in frames
    for socket in (owner, author, reader):
        await socket.disconnect()
