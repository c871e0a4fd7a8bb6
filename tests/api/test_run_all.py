"""POST /api/sessions/<id>/kernel/run-all: one replay turn holding the session's analysis (its
cells from the start, a restart notwithstanding, without those that failed); 404 for a stranger,
409 while a turn runs, 400 when no cell has run."""

from __future__ import annotations

import json

import pytest

from analyst.models import Turn
from analyst.realtime import events


@pytest.fixture
def cells(session):
    """A session's log: a cell before a restart, then a model cell, a failed cell and a user's."""
    events.append(session.id, "cell", {"code": "before = 1"})
    events.append(session.id, "notice", {"text": "The kernel was restarted.", "code": "kernel_restarted"})
    events.append(session.id, "tool_call", {"id": "toolu_01", "name": "run_python", "code": "x = 1"})
    events.append(session.id, "cell", {"code": "oops"})
    events.append(session.id, "error", {"name": "NameError", "value": "oops", "traceback": ""})
    events.append(session.id, "cell", {"code": "print(x)"})


def run_all(client, session):
    return client.post(f"/api/sessions/{session.id}/kernel/run-all")


def test_the_owner_queues_one_turn_with_the_sessions_analysis(api, session, cells):
    response = run_all(api, session)
    assert response.status_code == 202, response.content
    turn = Turn.objects.get(id=response.json()["turn"])
    assert turn.kind == Turn.Kind.REPLAY and response.json()["status"] == "queued"
    plan = json.loads(turn.input)
    assert plan["cells"] == [
        {"code": "before = 1", "by": "user"},  # a restart does not end the analysis
        {"code": "x = 1", "by": "model"},
        {"code": "print(x)", "by": "user"},
    ]
    assert plan["restart"] is True and plan["repair"] is False
    queued = session.events.order_by("-seq").first()
    assert queued.type == "notice" and queued.payload["code"] == "replay_queued"
    assert "running the 3 cells" in queued.payload["text"]


def test_a_stranger_gets_404(stranger_api, session, cells):
    response = run_all(stranger_api, session)
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
    assert not Turn.objects.exists()


def test_a_running_turn_is_409(api, session, alice, cells):
    Turn.objects.create(session=session, requested_by=alice, kind=Turn.Kind.CELL, input="x", status="running")
    response = run_all(api, session)
    assert response.status_code == 409 and response.json()["error"]["code"] == "turn_running"
    assert Turn.objects.count() == 1


def test_nothing_to_run_is_400(api, session):
    events.append(session.id, "cell", {"code": "oops"})
    events.append(session.id, "error", {"name": "NameError", "value": "oops", "traceback": ""})
    response = run_all(api, session)
    assert response.status_code == 400 and response.json()["error"]["code"] == "nothing_to_run"
    assert not Turn.objects.exists()


def test_only_post(api, session, cells):
    assert api.get(f"/api/sessions/{session.id}/kernel/run-all").status_code == 405
