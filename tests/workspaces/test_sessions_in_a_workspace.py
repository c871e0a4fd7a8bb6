"""Sessions made in a workspace, listed by workspace, and the workspace in each session's JSON."""

from __future__ import annotations

import pytest

from analyst.models import AnalysisSession, Membership
from tests.workspaces.conftest import bearer_client, client_of, user

pytestmark = pytest.mark.django_db
MODEL = "anthropic/claude-test"


def create(name: str, body: dict):
    return client_of(name).post("/api/sessions", {"model": MODEL, **body}, "application/json")


def test_an_editor_makes_a_session_in_the_workspace(team):
    made = create("eve", {"workspace": team.id, "title": "Q3"})
    assert made.status_code == 201, made.json()
    assert made.json()["workspace"] == {"id": team.id, "name": "Team"}
    session = AnalysisSession.objects.get(id=made.json()["id"])
    assert (session.workspace, session.owner) == (team, user("eve"))


def test_a_viewer_may_not_and_a_stranger_finds_no_workspace(team, mallory):
    viewer = create("vic", {"workspace": team.id})
    assert viewer.status_code == 403
    assert viewer.json()["error"]["message"] == (
        "viewers may read the sessions of Team, not make one: ask an editor or an admin of Team"
    )
    stranger = bearer_client(mallory).post("/api/sessions", {"workspace": team.id}, "application/json")
    assert stranger.status_code == 404
    assert not AnalysisSession.objects.exists()


def test_without_a_workspace_it_is_the_callers_personal_one(mallory):
    made = bearer_client(mallory).post("/api/sessions", {"model": MODEL}, "application/json")
    personal = mallory.personal_workspace
    assert made.json()["workspace"] == {"id": personal.id, "name": "Personal"}
    assert AnalysisSession.objects.get(id=made.json()["id"]).workspace is None


def test_a_member_lists_the_workspaces_sessions(team, mallory):
    made = create("eve", {"workspace": team.id}).json()
    create("eve", {})  # her personal one: not listed under the team
    listed = client_of("vic").get(f"/api/sessions?workspace={team.id}").json()["sessions"]
    assert [s["id"] for s in listed] == [made["id"]]
    assert bearer_client(mallory).get(f"/api/sessions?workspace={team.id}").status_code == 404
    assert bearer_client(mallory).get("/api/sessions?workspace=nonsense").status_code == 404


def test_a_personal_workspace_lists_its_owners_sessions_of_no_workspace(team):
    eve = user("eve")
    mine = create("eve", {}).json()
    listed = client_of("eve").get(f"/api/sessions?workspace={eve.personal_workspace.id}").json()["sessions"]
    assert [s["id"] for s in listed] == [mine["id"]]
    assert client_of("vic").get(f"/api/sessions?workspace={eve.personal_workspace.id}").status_code == 404


def test_a_member_who_left_no_longer_lists_what_they_made_there(team):
    made = create("eve", {"workspace": team.id, "title": "Q3 margins"})
    assert [s["title"] for s in client_of("eve").get("/api/sessions").json()["sessions"]] == ["Q3 margins"]
    Membership.objects.filter(workspace=team, user__username="eve").delete()
    assert client_of("eve").get("/api/sessions").json()["sessions"] == []
    assert client_of("eve").get(f"/api/sessions/{made.json()['id']}").status_code == 404
    assert client_of("olga").get(f"/api/sessions/{made.json()['id']}").status_code == 200  # still the team's
