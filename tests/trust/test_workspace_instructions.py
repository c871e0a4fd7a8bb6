"""A workspace's instructions: read by every member, set by its admins and owners (a 403 with the
sentence for others, a 404 for a stranger), bounded as a user's own, recorded in the audit log,
and given to the model in each of its sessions before the instructions of the member who asks."""

from __future__ import annotations

import json

import pytest

from analyst.models import AnalysisSession, AuditEntry, SavedInstructions, Turn
from analyst.trust.instructions import MAX_LENGTH
from analyst.turns.agent.prompt import system_prompt
from tests.workspaces.conftest import client_of, make_user, user

pytestmark = pytest.mark.django_db

TEXT = "Sales are counted in EUR.\nThe fiscal year starts on 1 April."


def url(team) -> str:
    return f"/api/workspaces/{team.id}/instructions"


def put(name: str, team, body: object):
    return client_of(name).put(url(team), json.dumps(body), "application/json")


@pytest.mark.parametrize("name", ["olga", "adam"])
def test_an_owner_or_an_admin_sets_them_and_every_member_reads_them(team, name):
    response = put(name, team, {"text": f"  {TEXT}  "})
    assert response.status_code == 200, response.content
    assert response.json() == {"text": TEXT, "editable": True, "max_length": MAX_LENGTH}
    team.refresh_from_db()
    assert team.instructions == TEXT
    for member in ("olga", "adam", "eve", "vic"):
        read = client_of(member).get(url(team))
        assert read.status_code == 200
        assert read.json()["text"] == TEXT
        assert read.json()["editable"] is (member in ("olga", "adam"))
    (entry,) = AuditEntry.objects.filter(action="workspace_instructions")
    assert (entry.workspace_id, entry.user, entry.detail) == (team.id, user(name), {"length": len(TEXT)})


@pytest.mark.parametrize("name", ["eve", "vic"])
def test_an_editor_or_a_viewer_may_not_set_them(team, name):
    response = put(name, team, {"text": TEXT})
    assert response.status_code == 403
    error = response.json()["error"]
    assert error["code"] == "forbidden" and "admin" in error["message"] and "of Team" in error["message"]
    team.refresh_from_db()
    assert team.instructions == ""
    assert not AuditEntry.objects.filter(action="workspace_instructions").exists()


def test_a_stranger_gets_404_for_reading_and_setting(team, mallory):
    team.instructions = TEXT
    team.save()
    for answer in (client_of("mallory").get(url(team)), put("mallory", team, {"text": "mine"})):
        assert answer.status_code == 404
        assert TEXT not in answer.content.decode()
    team.refresh_from_db()
    assert team.instructions == TEXT


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({}, "invalid_request"),
        ({"text": 3}, "invalid_instructions"),
        ({"text": "x" * (MAX_LENGTH + 1)}, "invalid_instructions"),
    ],
)
def test_bad_instructions_change_nothing(team, body, code):
    team.instructions = TEXT
    team.save()
    response = put("adam", team, body)
    assert (response.status_code, response.json()["error"]["code"]) == (400, code)
    team.refresh_from_db()
    assert team.instructions == TEXT


def test_the_prompt_gives_the_workspace_s_then_the_asking_member_s_own(team):
    team.instructions = TEXT
    team.save()
    SavedInstructions.objects.create(user=user("olga"), text="Olga likes bar charts.")
    SavedInstructions.objects.create(user=user("eve"), text="Eve wants tables, never charts.")
    session = AnalysisSession.objects.create(
        owner=user("olga"), workspace=team, model="anthropic/claude-test"
    )
    turn = Turn.objects.create(session=session, requested_by=user("eve"), kind="chat", input="Totals?")

    prompt = system_prompt(session, turn.requested_by_id)
    workspace_part = "Instructions of the workspace Team (set by its admins"
    assert workspace_part in prompt and TEXT in prompt
    assert "Eve wants tables, never charts." in prompt
    assert "Olga likes bar charts." not in prompt, "the session's owner did not ask this turn"
    assert prompt.index(TEXT) < prompt.index("Eve wants tables"), "the workspace's come first"

    assert "Olga likes bar charts." in system_prompt(session, user("olga").id)


def test_a_session_of_another_workspace_gets_none_of_them(team):
    team.instructions = TEXT
    team.save()
    own = AnalysisSession.objects.create(owner=make_user("walt"), model="anthropic/claude-test")
    assert TEXT not in system_prompt(own)
    assert "Instructions of the workspace" not in system_prompt(own)
