"""Removing a member closes their open sockets on the workspace's sessions at once; a viewer made
of an editor keeps reading; a membership gone unheard still ends the socket at the next tick."""

from __future__ import annotations

import pytest
import pytest_asyncio
from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from django.db import connections

from analyst.models import AnalysisSession, Membership
from analyst.realtime import events
from analyst.web.consumers import NOT_ALLOWED
from tests.collab.sockets import closed_with, member_socket, next_of
from tests.workspaces.conftest import client_of, membership, user

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


@pytest_asyncio.fixture(autouse=True)
async def close_consumer_connections():
    yield
    await database_sync_to_async(connections.close_all)()


def remove(team, by, name):
    gone = client_of(by).delete(f"/api/workspaces/{team.id}/members/{membership(team, name).id}")
    assert gone.status_code == 200, gone.content


def change_role(team, by, name, role):
    url = f"/api/workspaces/{team.id}/members/{membership(team, name).id}"
    changed = client_of(by).patch(url, {"role": role}, "application/json")
    assert changed.status_code == 200, changed.content


async def test_a_removed_members_socket_closes_at_once(settings, team, session):
    settings.ANALYST_HEARTBEAT_INTERVAL = 600  # no tick: the removal's own message closes it
    vic, olga = await sync_to_async(user)("vic"), await sync_to_async(user)("olga")
    own = await sync_to_async(AnalysisSession.objects.create)(owner=vic, model="m")  # vic's personal one
    in_team, personal, stays = (
        await member_socket(session, vic),
        await member_socket(own, vic),
        await member_socket(session, olga),
    )
    for socket in (in_team, personal, stays):
        await next_of(socket, "heartbeat")

    await sync_to_async(remove)(team, "olga", "vic")
    assert await closed_with(in_team) == NOT_ALLOWED
    while (await next_of(stays, "presence"))["users"] != ["olga"]:  # vic's departure is heard
        pass
    await sync_to_async(events.append)(own.id, "stdout", {"text": "still mine\n"})
    assert (await next_of(personal, "stdout"))["payload"] == {"text": "still mine\n"}  # vic's own: open
    for socket in (personal, stays):
        await socket.disconnect()


async def test_a_lower_role_that_still_reads_keeps_the_socket(settings, team, session):
    settings.ANALYST_HEARTBEAT_INTERVAL = 600
    eve = await sync_to_async(user)("eve")
    socket = await member_socket(session, eve)
    await next_of(socket, "heartbeat")
    await sync_to_async(change_role)(team, "olga", "eve", "viewer")
    assert (await next_of(socket, "notifications"))["unread"] == 0  # told, and still open
    await socket.disconnect()


async def test_a_membership_gone_unheard_ends_the_socket_at_the_next_tick(settings, team, session):
    settings.ANALYST_HEARTBEAT_INTERVAL = 0.3
    vic = await sync_to_async(user)("vic")
    socket = await member_socket(session, vic)
    await next_of(socket, "heartbeat")
    await sync_to_async(Membership.objects.filter(workspace=team, user=vic).delete)()  # no message sent
    assert await closed_with(socket) == NOT_ALLOWED
