"""Deciding on a waiting cell: the owner's alone, once, and only while its turn waits for it;
the session's approval mode set with PATCH. (The wait itself: tests/integration/test_cell_approval.py.)"""

from __future__ import annotations

import json

import pytest
from django.test import Client

from analyst.models import AnalysisSession, ShareLink, Turn
from analyst.realtime import events

JSON = "application/json"


@pytest.fixture
def waiting(session, alice):
    """A running turn whose cell toolu_01 waits, as the worker leaves it (approvals.await_decision)."""
    turn = Turn.objects.create(
        session=session, requested_by=alice, kind=Turn.Kind.CHAT, input="Save it", status=Turn.Status.RUNNING
    )
    payload = {"tool_call_id": "toolu_01", "code": "df.to_csv('out.csv')", "why": []}
    events.append(session.id, "cell_pending", payload, turn=turn)
    return turn


def decide(client, session, action, body=None, tool_call_id="toolu_01"):
    url = f"/api/sessions/{session.id}/pending/{tool_call_id}/{action}"
    return client.post(url, json.dumps(body or {}), JSON)


def decided(session):
    return [e.payload for e in session.events.filter(type="cell_decided").order_by("seq")]


def test_run_stores_one_decision_and_a_second_gets_409(api, session, waiting):
    response = decide(api, session, "approve")
    assert response.status_code == 200, response.content
    assert response.json()["type"] == "cell_decided"
    assert decided(session) == [{"tool_call_id": "toolu_01", "pending": 1, "decision": "run"}]

    again = decide(api, session, "reject", {"reason": "too late"})
    assert again.status_code == 409
    assert again.json()["error"] == {
        "code": "already_decided",
        "message": "this cell was already decided: it ran",
    }
    assert len(decided(session)) == 1


def test_an_edit_and_a_reason_are_stored(api, session, waiting, alice):
    assert decide(api, session, "approve", {"code": "df.head()"}).status_code == 200
    assert decided(session)[-1] == {
        "tool_call_id": "toolu_01",
        "pending": 1,
        "decision": "run",
        "code": "df.head()",
        "edited": True,
    }
    turn = Turn.objects.create(session=session, requested_by=alice, kind="chat", input="x", status="running")
    events.append(session.id, "cell_pending", {"tool_call_id": "toolu_02", "code": "1"}, turn=turn)
    assert decide(api, session, "reject", {"reason": " not now "}, tool_call_id="toolu_02").status_code == 200
    assert decided(session)[-1]["reason"] == "not now"


def test_no_such_cell_is_404(api, session, waiting):
    response = decide(api, session, "approve", tool_call_id="toolu_99")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_pending"
    assert decided(session) == []


def test_a_cell_whose_turn_ended_or_is_stopping_is_409(api, session, waiting):
    Turn.objects.filter(id=waiting.id).update(cancel_requested=True)
    response = decide(api, session, "approve")
    assert response.status_code == 409
    assert "being stopped" in response.json()["error"]["message"]
    Turn.objects.filter(id=waiting.id).update(status=Turn.Status.CANCELLED)
    response = decide(api, session, "reject")
    assert response.status_code == 409
    assert "its turn has ended" in response.json()["error"]["message"]
    assert decided(session) == []


@pytest.mark.parametrize(
    ("action", "body"),
    [
        ("approve", {"code": ""}),
        ("approve", {"code": 3}),
        ("reject", {"reason": ["no"]}),
        ("reject", {"reason": "x" * 2001}),
    ],
)
def test_a_bad_body_is_400(api, session, waiting, action, body):
    response = decide(api, session, action, body)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_request"
    assert decided(session) == []


def test_only_the_owner_decides(stranger_api, mallory, session, waiting):
    response = decide(stranger_api, session, "approve")
    assert response.status_code == 404, "a stranger's answer: no such session, as everywhere"
    assert response.json()["error"] == {"code": "not_found", "message": "no such session"}
    ShareLink.objects.create(session=session)  # the stranger may even hold a share link: still 404
    viewer = Client()
    viewer.force_login(mallory)
    assert decide(viewer, session, "approve").status_code == 404
    assert decided(session) == []


def test_the_owner_without_csrf_is_refused(alice, session, waiting):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)
    response = decide(browser, session, "approve")
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "csrf_failed"
    assert decided(session) == []


@pytest.mark.parametrize(
    ("value", "mode"), [(True, "all"), ("writes", "writes"), (False, "off"), ("all", "all"), ("off", "off")]
)
def test_patch_sets_the_approval_mode(api, session, value, mode):
    response = api.patch(f"/api/sessions/{session.id}", json.dumps({"approve_cells": value}), JSON)
    assert response.status_code == 200
    assert response.json()["approve_cells"] == mode
    assert AnalysisSession.objects.get(id=session.id).approve_cells == mode


@pytest.mark.parametrize("value", ["some", None, 1, ["all"]])
def test_patch_refuses_an_unknown_mode(api, session, value):
    body = json.dumps({"approve_cells": value, "title": "Renamed"})
    response = api.patch(f"/api/sessions/{session.id}", body, JSON)
    assert response.status_code == 400
    assert "approve_cells" in response.json()["error"]["message"]
    session.refresh_from_db()
    assert (session.approve_cells, session.title) == ("off", "Untitled analysis")
