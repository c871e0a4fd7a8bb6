"""The pages: the workspaces list and a workspace's page, accepting an invitation (signing in
first), the header's switcher, and the sessions list and New session in a workspace."""

from __future__ import annotations

import pytest
from django.test import Client

from analyst.models import AnalysisSession, Membership
from tests.workspaces.conftest import client_of, user

pytestmark = pytest.mark.django_db
MODEL = "anthropic/claude-test"


def browser_of(name_or_user) -> Client:
    client = Client()
    client.force_login(user(name_or_user) if isinstance(name_or_user, str) else name_or_user)
    return client


def new_invitation(team, role: str = "editor") -> str:
    made = client_of("olga").post(
        f"/api/workspaces/{team.id}/invitations", {"role": role}, "application/json"
    )
    return made.json()["url"].removeprefix("http://testserver")


def test_a_workspace_page_is_its_members_alone(team, mallory):
    page = browser_of("vic").get(f"/workspaces/{team.id}/")
    assert page.status_code == 200
    assert b'data-manages="false"' in page.content
    assert b'data-manages="true"' in browser_of("adam").get(f"/workspaces/{team.id}/").content
    assert browser_of(mallory).get(f"/workspaces/{team.id}/").status_code == 404
    assert browser_of(mallory).get("/workspaces/").status_code == 200


def test_accepting_asks_to_sign_in_then_comes_back(team, mallory):
    path = new_invitation(team)
    anonymous = Client().get(path)
    assert anonymous.status_code == 302
    assert anonymous["Location"].startswith("/accounts/login/?next=/invitations/")
    browser = browser_of(mallory)
    offer = browser.get(path)
    assert "You are invited to the workspace “Team” as editor." in offer.content.decode()
    assert not Membership.objects.filter(workspace=team, user=mallory).exists()  # a GET accepts nothing
    accepted = browser.post(path)
    assert accepted["Location"] == f"/workspaces/{team.id}/"
    assert Membership.objects.get(workspace=team, user=mallory).role == "editor"
    used = browser.get(path)
    assert used.status_code == 410
    assert "This invitation has been used already" in used.content.decode()


def test_an_unknown_invitation_says_so(mallory):
    page = browser_of(mallory).get("/invitations/nothing-here/")
    assert page.status_code == 410
    assert "This invitation does not exist" in page.content.decode()


def test_the_switcher_lists_the_users_workspaces_and_filters_the_sessions(team):
    eve = user("eve")
    in_team = AnalysisSession.objects.create(owner=eve, workspace=team, model=MODEL, title="Team work")
    AnalysisSession.objects.create(owner=eve, model=MODEL, title="My own work")
    browser = browser_of(eve)
    page = browser.get(f"/sessions/?workspace={team.id}").content.decode()
    assert f'href="/sessions/?workspace={eve.personal_workspace.id}"' in page
    assert f'href="/sessions/?workspace={team.id}" data-testid="switch-workspace" aria-current="page"' in page
    assert "Team work" in page and "My own work" not in page
    assert str(in_team.id) in page
    personal = browser.get(f"/sessions/?workspace={eve.personal_workspace.id}").content.decode()
    assert "My own work" in personal and "Team work" not in personal
    assert browser_of("vic").get(f"/sessions/?workspace={eve.personal_workspace.id}").status_code == 404


def test_new_session_in_a_workspace_takes_an_editor(team):
    made = browser_of("eve").post("/sessions/new", {"model": MODEL, "workspace": team.id})
    assert made.status_code == 302
    assert AnalysisSession.objects.get().workspace == team
    refused = browser_of("vic").post("/sessions/new", {"model": MODEL, "workspace": team.id}, follow=True)
    assert "viewers may read the sessions of Team, not make one" in refused.content.decode()
    assert AnalysisSession.objects.count() == 1
