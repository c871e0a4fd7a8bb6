"""Creating and listing sessions: a listed model or the default, and only one's own."""

from __future__ import annotations

import uuid
from datetime import datetime

from analyst.models import AnalysisSession

SESSIONS = "/api/sessions"


def test_create_with_the_default_model(api, alice):
    response = api.post(SESSIONS, {}, "application/json")
    assert response.status_code == 201
    body = response.json()
    created = AnalysisSession.objects.get()
    assert created.owner == alice
    assert body == {
        "id": str(created.id),
        "title": "Untitled analysis",
        "model": "anthropic/claude-test",
        "created_at": created.created_at.isoformat(),
        "updated_at": created.updated_at.isoformat(),
        "workspace": {"id": alice.personal_workspace.id, "name": "Personal"},
    }
    uuid.UUID(body["id"])
    datetime.fromisoformat(body["created_at"])


def test_create_with_an_empty_body_uses_the_defaults(api):
    response = api.generic("POST", SESSIONS)
    assert response.status_code == 201
    assert response.json()["model"] == "anthropic/claude-test"


def test_create_with_a_listed_model_and_a_title(api):
    response = api.post(SESSIONS, {"model": "openai/gpt-test", "title": "  Q3 sales  "}, "application/json")
    assert response.status_code == 201
    assert (response.json()["model"], response.json()["title"]) == ("openai/gpt-test", "Q3 sales")
    assert AnalysisSession.objects.get().model == "openai/gpt-test"


def test_an_unknown_model_is_400_and_creates_nothing(api):
    response = api.post(SESSIONS, {"model": "anthropic/claude-opus-99"}, "application/json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid_model"
    assert "anthropic/claude-opus-99" in error["message"]
    assert "anthropic/claude-test" in error["message"] and "openai/gpt-test" in error["message"]
    assert not AnalysisSession.objects.exists()


def test_a_body_that_is_not_a_json_object_is_400(api):
    for body in ("not json", "[1, 2]"):
        response = api.post(SESSIONS, body, "application/json")
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "invalid_json"
    assert not AnalysisSession.objects.exists()


def test_a_title_that_is_not_a_string_is_400_not_a_crash(api):
    response = api.post(SESSIONS, {"title": 42}, "application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_request"
    assert not AnalysisSession.objects.exists()


def test_the_list_holds_only_my_sessions_newest_first(api, alice, mallory):
    older = AnalysisSession.objects.create(owner=alice, model="anthropic/claude-test", title="older")
    newer = AnalysisSession.objects.create(owner=alice, model="openai/gpt-test", title="newer")
    AnalysisSession.objects.create(owner=mallory, model="anthropic/claude-test", title="mallory's")
    response = api.get(SESSIONS)
    assert response.status_code == 200
    listed = response.json()["sessions"]
    assert [s["id"] for s in listed] == [str(newer.id), str(older.id)]
    assert [s["title"] for s in listed] == ["newer", "older"]


def test_a_stranger_lists_none_of_mine(stranger_api, session):
    assert stranger_api.get(SESSIONS).json() == {"sessions": []}
