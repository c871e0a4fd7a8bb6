"""Server-sent events from a real ASGI server: the stored log after N, then live events, gap-free."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from analyst.models import AnalysisSession, ApiToken, Event, ShareLink
from analyst.realtime import events
from analyst.sessions import shares


def frames(response: httpx.Response) -> Iterator[dict[str, str]]:
    """The SSE frames of a streaming response, keep-alive comments skipped."""
    frame: dict[str, str] = {}
    for line in response.iter_lines():
        if not line:
            if frame:
                yield frame
            frame = {}
        elif not line.startswith(":"):
            key, _, value = line.partition(": ")
            frame[key] = value


def take(stream: Iterator[dict[str, str]], count: int) -> list[dict[str, Any]]:
    """``count`` frames, each checked for agreement between its id, event and data lines."""
    taken = []
    for _ in range(count):
        frame = next(stream)
        data = json.loads(frame["data"])
        assert int(frame["id"]) == data["seq"]
        assert frame["event"] == data["type"]
        taken.append(data)
    return taken


@pytest.fixture
def stream_of(transactional_db: None, asgi_server: str, alice: Any) -> Any:
    _, secret = ApiToken.issue(alice)
    client = httpx.Client(base_url=asgi_server, headers={"Authorization": f"Bearer {secret}"}, timeout=10)

    def open_stream(session: AnalysisSession, after: int) -> Any:
        return client.stream(
            "GET",
            f"/api/sessions/{session.id}/events",
            params={"after": after},
            headers={"Accept": "text/event-stream"},
        )

    yield open_stream
    client.close()


def test_stored_events_first_then_live_ones_without_gaps_or_repeats(stream_of, session):
    for n in (1, 2, 3):
        events.append(session.id, "stdout", {"text": f"stored {n}"})
    with stream_of(session, after=1) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["cache-control"] == "no-cache"
        stream = frames(response)
        stored = take(stream, 2)
        events.append(session.id, "notice", {"text": "live 4"})
        events.append(session.id, "stdout", {"text": "live 5"})
        live = take(stream, 2)
        events.append(session.id, "turn_done", {})
        last = take(stream, 1)
    received = stored + live + last
    assert [e["seq"] for e in received] == [2, 3, 4, 5, 6]
    assert [e["type"] for e in received] == ["stdout", "stdout", "notice", "stdout", "turn_done"]
    assert [e["payload"].get("text") for e in received] == ["stored 2", "stored 3", "live 4", "live 5", None]


def test_an_event_whose_broadcast_was_lost_is_filled_in_from_the_log(stream_of, session):
    events.append(session.id, "stdout", {"text": "1"})
    with stream_of(session, after=0) as response:
        stream = frames(response)
        assert [e["seq"] for e in take(stream, 1)] == [1]
        # Stored but never broadcast, as when a broadcast is dropped.
        Event.objects.create(session=session, seq=2, type="stdout", payload={"text": "silent 2"})
        AnalysisSession.objects.filter(id=session.id).update(next_seq=3)
        events.append(session.id, "stdout", {"text": "3"})
        filled = take(stream, 2)
    assert [(e["seq"], e["payload"]["text"]) for e in filled] == [(2, "silent 2"), (3, "3")]


def test_a_stranger_cannot_open_the_stream(transactional_db, asgi_server, session, mallory):
    _, secret = ApiToken.issue(mallory)
    response = httpx.get(
        f"{asgi_server}/api/sessions/{session.id}/events",
        headers={"Authorization": f"Bearer {secret}", "Accept": "text/event-stream"},
        timeout=10,
    )
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_a_share_links_stream_ends_when_the_link_is_revoked(transactional_db, asgi_server, session):
    events.append(session.id, "stdout", {"text": "1"})
    link = ShareLink.objects.create(session=session)
    with httpx.Client(base_url=asgi_server, timeout=10) as anyone:
        url = f"/api/shared/{link.token}/events"
        with anyone.stream("GET", url, headers={"Accept": "text/event-stream"}) as response:
            stream = frames(response)
            assert [e["seq"] for e in take(stream, 1)] == [1]
            shares.do_revoke(session=session, link_id=link.id)
            assert list(stream) == []  # the server ended the stream
        assert anyone.get(url).status_code == 404
