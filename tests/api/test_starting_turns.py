"""Asking and running a cell: the text is checked, and one turn at a time per session."""

from __future__ import annotations

import pytest

from analyst.models import Event, Turn

ENDPOINTS = [
    ("messages", "content", Turn.Kind.CHAT, "user_message"),
    ("cells", "code", Turn.Kind.CELL, "cell"),
]


@pytest.mark.parametrize(("endpoint", "field", "kind", "event"), ENDPOINTS)
def test_a_good_request_queues_a_turn_and_logs_it(api, session, alice, endpoint, field, kind, event):
    response = api.post(
        f"/api/sessions/{session.id}/{endpoint}", {field: "df.describe()"}, "application/json"
    )
    assert response.status_code == 202
    turn = Turn.objects.get()
    assert response.json() == {"turn": turn.id, "status": "queued"}
    assert (turn.session, turn.requested_by, turn.kind, turn.input) == (session, alice, kind, "df.describe()")
    stored = Event.objects.get()
    assert (stored.seq, stored.type, stored.turn_id) == (1, event, turn.id)
    asked = {"text": "df.describe()", "by": "alice", "session_title": "Df.describe()"}  # untitled: named
    assert stored.payload == {"content": asked, "code": {"code": "df.describe()", "by": "alice"}}[field]


@pytest.mark.parametrize(("endpoint", "field", "kind", "event"), ENDPOINTS)
@pytest.mark.parametrize("value", ["", "   \n\t", None, 42, ["text"]], ids=repr)
def test_empty_or_non_text_input_is_400(api, session, endpoint, field, kind, event, value):
    response = api.post(f"/api/sessions/{session.id}/{endpoint}", {field: value}, "application/json")
    assert response.status_code == 400
    assert response.json() == {
        "error": {"code": "invalid_request", "message": f"{field!r} must be a non-empty string"}
    }
    assert not Turn.objects.exists() and not Event.objects.exists()


@pytest.mark.parametrize(("endpoint", "field", "kind", "event"), ENDPOINTS)
def test_a_missing_field_or_a_bad_body_is_400(api, session, endpoint, field, kind, event):
    url = f"/api/sessions/{session.id}/{endpoint}"
    assert api.post(url, {"other": "x"}, "application/json").json()["error"]["code"] == "invalid_request"
    assert api.post(url, "{not json", "application/json").json()["error"]["code"] == "invalid_json"
    assert api.post(url, '"just a string"', "application/json").json()["error"]["code"] == "invalid_json"
    assert not Turn.objects.exists() and not Event.objects.exists()


@pytest.mark.parametrize(("endpoint", "field", "kind", "event"), ENDPOINTS)
@pytest.mark.parametrize("status", [Turn.Status.QUEUED, Turn.Status.RUNNING])
def test_a_second_turn_while_one_is_unfinished_is_409(
    api, session, alice, endpoint, field, kind, event, status
):
    busy = Turn.objects.create(
        session=session, requested_by=alice, kind=Turn.Kind.CHAT, input="x", status=status
    )
    response = api.post(f"/api/sessions/{session.id}/{endpoint}", {field: "1 + 1"}, "application/json")
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "turn_running"
    assert "already running" in error["message"]
    assert list(Turn.objects.all()) == [busy]
    assert not Event.objects.exists()


@pytest.mark.parametrize("status", [Turn.Status.DONE, Turn.Status.FAILED, Turn.Status.CANCELLED])
def test_a_finished_turn_does_not_block_the_next(api, session, alice, status):
    Turn.objects.create(session=session, requested_by=alice, kind=Turn.Kind.CHAT, input="x", status=status)
    response = api.post(f"/api/sessions/{session.id}/messages", {"content": "next"}, "application/json")
    assert response.status_code == 202
    assert Turn.objects.count() == 2


def test_a_running_turn_in_another_session_does_not_block(api, session, alice):
    other = type(session).objects.create(owner=alice, model="anthropic/claude-test")
    Turn.objects.create(session=other, requested_by=alice, kind=Turn.Kind.CHAT, input="x", status="running")
    response = api.post(f"/api/sessions/{session.id}/messages", {"content": "go"}, "application/json")
    assert response.status_code == 202


@pytest.mark.parametrize(("endpoint", "field", "kind", "event"), ENDPOINTS)
def test_a_text_over_the_input_limit_is_413_and_nothing_is_stored(
    api, session, settings, endpoint, field, kind, event
):
    settings.ANALYST_MAX_INPUT = 1000
    url = f"/api/sessions/{session.id}/{endpoint}"
    assert api.post(url, {field: "x" * 1000}, "application/json").status_code == 202
    Turn.objects.all().update(status=Turn.Status.DONE)
    response = api.post(url, {field: "x" * 1001}, "application/json")
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "input_too_long"
    assert response.json()["error"]["message"].endswith("1,001 characters long; at most 1,000 are accepted")
    assert Turn.objects.count() == 1 and Event.objects.count() == 1
