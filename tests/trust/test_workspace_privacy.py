"""A workspace's privacy: set by its admins and owners (PATCH /api/workspaces/<id> {"privacy"}), and
when it is "schema" every session in it is in schema mode whatever its own setting: the model's
policy and system prompt, the session's JSON and page, a refused switch to full, and a fork made
of it elsewhere."""

from __future__ import annotations

import json

import pytest

from analyst.models import AnalysisSession, AuditEntry, DataFile
from analyst.sessions import forks
from analyst.trust import privacy
from analyst.turns.agent.prompt import system_prompt
from tests.api.test_privacy_settings import people
from tests.workspaces.conftest import client_of, user

pytestmark = pytest.mark.django_db


def patch(name: str, url: str, body: object):
    return client_of(name).patch(url, json.dumps(body), "application/json")


def in_team(team) -> AnalysisSession:
    """Eve's session in the team workspace, its own setting full."""
    return AnalysisSession.objects.create(owner=user("eve"), workspace=team, model="anthropic/claude-test")


@pytest.mark.parametrize("name", ["olga", "adam"])
def test_an_owner_or_an_admin_sets_it(team, name):
    response = patch(name, f"/api/workspaces/{team.id}", {"privacy": "schema"})
    assert response.status_code == 200, response.content
    assert response.json()["privacy"] == "schema" and response.json()["name"] == "Team"
    team.refresh_from_db()
    assert team.privacy == "schema"
    (entry,) = AuditEntry.objects.filter(action="workspace_privacy")
    assert (entry.user, entry.detail) == (user(name), {"privacy": "schema", "was": ""})
    assert patch(name, f"/api/workspaces/{team.id}", {"privacy": ""}).json()["privacy"] == ""


@pytest.mark.parametrize("name", ["eve", "vic"])
def test_an_editor_or_a_viewer_may_not(team, name):
    response = patch(name, f"/api/workspaces/{team.id}", {"privacy": "schema"})
    assert response.status_code == 403
    assert "admin" in response.json()["error"]["message"]
    team.refresh_from_db()
    assert team.privacy == ""


def test_a_stranger_gets_404_and_a_bad_value_400(team, mallory):
    assert patch("mallory", f"/api/workspaces/{team.id}", {"privacy": "schema"}).status_code == 404
    refused = patch("olga", f"/api/workspaces/{team.id}", {"privacy": "full", "name": "Renamed"})
    assert refused.status_code == 400 and "'privacy' must be" in refused.json()["error"]["message"]
    team.refresh_from_db()
    assert (team.privacy, team.name) == ("", "Team"), "a bad value changes nothing, the name neither"


def test_an_admin_sets_privacy_without_the_owner_s_rename(team):
    response = patch("adam", f"/api/workspaces/{team.id}", {"privacy": "schema", "name": "Mine"})
    assert response.status_code == 403, "renaming takes an owner: nothing changes"
    team.refresh_from_db()
    assert (team.privacy, team.name) == ("", "Team")


def test_every_session_in_it_is_in_schema_mode(team, media):
    session = in_team(team)
    people(session)
    assert privacy.effective(session) == "full" and not privacy.policy_for(session).schema
    team.privacy = "schema"
    team.save()

    assert privacy.effective(session) == "schema"
    policy = privacy.policy_for(session)
    assert policy.schema
    assert policy.redact("Bo Rask wrote")[0] == "«col:name» wrote"
    prompt = system_prompt(session)
    assert "schema mode" in prompt and "Ann Vell" not in prompt and "First rows:" not in prompt

    read = client_of("vic").get(f"/api/sessions/{session.id}").json()
    assert (read["privacy"], read["privacy_set_by"]) == ("schema", "Team")


def test_switching_such_a_session_to_full_is_refused_with_a_sentence(team):
    session = in_team(team)
    team.privacy = "schema"
    team.save()
    response = patch("eve", f"/api/sessions/{session.id}", {"privacy": "full", "title": "Renamed"})
    assert response.status_code == 409
    assert response.json()["error"] == {
        "code": "set_by_workspace",
        "message": "the workspace Team keeps every session in it in schema mode, so this one cannot send"
        " full outputs to the model: ask an admin of the workspace to change its privacy",
    }
    session.refresh_from_db()
    assert session.privacy == "full" and session.title != "Renamed", "nothing changed"
    assert patch("eve", f"/api/sessions/{session.id}", {"privacy": "schema"}).status_code == 200


def test_a_personal_workspace_in_schema_mode_holds_its_owner_s_sessions(team):
    eve = user("eve")
    own = AnalysisSession.objects.create(owner=eve, model="anthropic/claude-test")  # no workspace: her own
    assert (
        patch("eve", f"/api/workspaces/{eve.personal_workspace.id}", {"privacy": "schema"}).status_code == 200
    )
    assert privacy.effective(own) == "schema"


def test_a_fork_elsewhere_stays_in_schema_mode(team, mallory, media):
    session = in_team(team)
    people(session)
    team.privacy = "schema"
    team.save()
    fork = forks.do_fork(source=session, owner=user("vic"), files=True, kernel_state=False)
    assert fork.workspace_id is None, "a fork goes to its maker's own workspace"
    assert fork.privacy == "schema"
    assert privacy.policy_for(fork).redact("Ann Vell wrote")[0] == "«col:name» wrote"
    assert DataFile.objects.filter(session=fork).exists()


def test_the_page_shows_the_mode_set_by_the_workspace(team):
    session = in_team(team)
    team.privacy = "schema"
    team.save()
    client = client_of("eve")
    client.force_login(user("eve"))
    page = client.get(f"/sessions/{session.id}/").content.decode()
    assert 'data-privacy="schema"' in page and 'data-privacy-set-by="Team"' in page
