"""A team session's live view: every member of its workspace, whatever their role, follows it; a
stranger is refused as if it did not exist."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model

from analyst.models import Membership, Workspace
from analyst.models.workspaces import Role
from tests.realtime.test_session_websocket import connect, next_event

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def heartbeat_only_on_connect(settings):
    settings.ANALYST_HEARTBEAT_INTERVAL = 600


def in_a_team(session, role: Role | None):
    """A user who holds ``role`` in the session's (new) workspace; None: a stranger."""
    workspace = Workspace.objects.create(name="Team")
    session.workspace = workspace
    session.save(update_fields=["workspace"])
    Membership.objects.create(workspace=workspace, user=session.owner, role=Role.OWNER)
    person = get_user_model().objects.create_user(f"someone-{role}")
    if role is not None:
        Membership.objects.create(workspace=workspace, user=person, role=role)
    return person


@pytest.mark.parametrize("role", [Role.OWNER, Role.ADMIN, Role.EDITOR, Role.VIEWER])
async def test_each_member_follows_it_live(owner_and_session, role):
    _, session = owner_and_session
    member = await sync_to_async(in_a_team)(session, role)
    communicator, connected, _ = await connect(session.id, member)
    assert connected
    assert (await next_event(communicator))["payload"] == {"text": "0\n"}
    await communicator.disconnect()


async def test_a_stranger_is_refused_as_if_it_did_not_exist(owner_and_session):
    owner, session = owner_and_session
    stranger = await sync_to_async(in_a_team)(session, None)
    communicator, connected, code = await connect(session.id, stranger)
    assert not connected and code == 4404
    await communicator.disconnect()
    communicator, connected, _ = await connect(session.id, owner)  # the owner, as its workspace's owner
    assert connected
    await communicator.disconnect()
