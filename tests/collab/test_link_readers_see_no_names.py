"""A team session's events say which member asked or ran each ("asked by olga"); a share link's
readers, who are not members, read the same events without the names: over HTTP, as server-sent
events, over the WebSocket, and in a fork made through the link. Members still read them."""

from __future__ import annotations

import json

import httpx
import pytest
from asgiref.sync import sync_to_async
from django.test import Client

from analyst.models import AnalysisSession, Event, ShareLink, Turn
from analyst.realtime import events
from tests.api.conftest import asgi_server  # noqa: F401 (a fixture)
from tests.api.test_event_stream import frames
from tests.collab.sockets import open_socket
from tests.workspaces.conftest import client_of, user

NAMED = ("user_message", "cell")


@pytest.fixture
def link(session: AnalysisSession) -> ShareLink:
    """A link to eve's session, which now also holds a cell eve ran herself (seq 5)."""
    turn = Turn.objects.create(session=session, requested_by=user("eve"), kind=Turn.Kind.CELL, input="1 + 1")
    events.append(session.id, "cell", {"code": "1 + 1", "by": "eve"}, turn=turn)
    return ShareLink.objects.create(session=session, allow_downloads=False)


def named_in(logged: list[dict]) -> list[tuple[str, object]]:
    """(type, by) of the questions and cells in ``logged``, in order."""
    return [(e["type"], e["payload"].get("by")) for e in logged if e["type"] in NAMED]


def test_the_log_over_http_names_members_to_members_only(session, link):
    read = Client().get(f"/api/shared/{link.token}/events").json()["events"]
    assert named_in(read) == [("user_message", None), ("cell", None)]
    assert read[0]["payload"] == {"text": "Which region?"}  # the rest of it as it was
    assert read[4]["payload"] == {"code": "1 + 1"}
    as_member = client_of("vic").get(f"/api/sessions/{session.id}/events").json()["events"]
    assert named_in(as_member) == [("user_message", "olga"), ("cell", "eve")]
    assert Event.objects.get(session=session, seq=1).payload["by"] == "olga"  # the log keeps them


@pytest.mark.django_db(transaction=True)
def test_the_event_stream_of_a_link_names_no_member(session, link, asgi_server):  # noqa: F811
    url = f"{asgi_server}/api/shared/{link.token}/events"
    with httpx.stream("GET", url, headers={"Accept": "text/event-stream"}, timeout=10) as response:
        stream = frames(response)
        stored = [json.loads(next(stream)["data"]) for _ in range(5)]
        turn = Turn.objects.create(session=session, requested_by=user("olga"), kind=Turn.Kind.CHAT)
        events.append(session.id, "user_message", {"text": "And the South?", "by": "olga"}, turn=turn)
        live = json.loads(next(stream)["data"])
    assert named_in(stored) == [("user_message", None), ("cell", None)]
    assert live["payload"] == {"text": "And the South?"}


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_the_websocket_of_a_link_names_no_member_stored_or_live(session, link):
    reader = await open_socket(f"/ws/shared/{link.token}/", collab=False)
    member = await open_socket(f"/ws/sessions/{session.id}/", await sync_to_async(user)("vic"), collab=False)
    read, seen = [], []
    for socket, into in ((reader, read), (member, seen)):
        while len(into) < 5:
            if (frame := await socket.receive_json_from(timeout=5))["type"] != "heartbeat":
                into.append(frame)
    assert named_in(read) == [("user_message", None), ("cell", None)]
    assert named_in(seen) == [("user_message", "olga"), ("cell", "eve")]

    await sync_to_async(events.append)(session.id, "cell", {"code": "2 + 2", "by": "adam"})
    while (live := await reader.receive_json_from(timeout=5))["type"] != "cell":
        pass
    assert live["payload"] == {"code": "2 + 2"}
    while (live := await member.receive_json_from(timeout=5))["type"] != "cell":
        pass
    assert live["payload"]["by"] == "adam"
    await reader.disconnect()
    await member.disconnect()


def test_a_fork_through_the_link_names_no_member_a_members_fork_does(session, link, mallory):
    stranger = Client()
    stranger.force_login(mallory)
    assert stranger.post(f"/s/{link.token}/fork").status_code == 302
    viewer = Client()
    viewer.force_login(user("vic"))
    assert viewer.post(f"/sessions/{session.id}/fork").status_code == 302
    forks = {fork.owner.username: fork for fork in AnalysisSession.objects.exclude(id=session.id)}

    def named(fork: AnalysisSession) -> list[tuple[str, object]]:
        return [(e.type, e.payload.get("by")) for e in fork.events.filter(type__in=NAMED).order_by("seq")]

    assert named(forks["mallory"]) == [("user_message", None), ("cell", None)]
    assert named(forks["vic"]) == [("user_message", "olga"), ("cell", "eve")]
