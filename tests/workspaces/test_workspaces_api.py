"""/api/workspaces: making, listing, reading, renaming and deleting a workspace."""

from __future__ import annotations

import pytest

from analyst.models import AnalysisSession, Workspace
from tests.workspaces.conftest import bearer_client, client_of, user

pytestmark = pytest.mark.django_db


def test_making_a_workspace_makes_its_creator_its_owner(mallory):
    api = bearer_client(mallory)
    made = api.post("/api/workspaces", {"name": "  Finance "}, "application/json")
    assert made.status_code == 201
    assert made.json() == {"id": made.json()["id"], "name": "Finance", "personal": False, "role": "owner"}
    listed = api.get("/api/workspaces").json()["workspaces"]
    personal = mallory.personal_workspace
    assert listed == [
        {"id": personal.id, "name": "Personal", "personal": True, "role": "owner"},
        {"id": made.json()["id"], "name": "Finance", "personal": False, "role": "owner"},
    ]


@pytest.mark.parametrize("body", [{}, {"name": ""}, {"name": "   "}, {"name": 3}, {"name": "x" * 101}])
def test_a_bad_name_is_refused_in_words(mallory, body):
    answer = bearer_client(mallory).post("/api/workspaces", body, "application/json")
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "invalid_request"
    assert "'name'" in answer.json()["error"]["message"]
    assert not Workspace.objects.filter(personal_of__isnull=True).exists()


def test_a_non_member_gets_404_for_everything_of_the_workspace(team, mallory):
    api = bearer_client(mallory)
    base = f"/api/workspaces/{team.id}"
    for method, path in [
        ("get", base),
        ("patch", base),
        ("delete", base),
        ("get", f"{base}/members"),
        ("post", f"{base}/members"),
        ("get", f"{base}/invitations"),
        ("post", f"{base}/invitations"),
        ("delete", f"{base}/invitations/1"),
        ("patch", f"{base}/members/1"),
        ("get", "/api/workspaces/999999"),
    ]:
        answer = getattr(api, method)(path, {"name": "x", "role": "viewer"}, "application/json")
        assert answer.status_code in (404, 405), (method, path)
        if answer.status_code == 405:
            continue
        assert answer.json()["error"]["code"] == "not_found", (method, path)
    assert Workspace.objects.get(id=team.id).name == "Team"


def test_every_member_reads_it_with_their_role(team):
    for name, role in [("olga", "owner"), ("adam", "admin"), ("eve", "editor"), ("vic", "viewer")]:
        answer = client_of(name).get(f"/api/workspaces/{team.id}").json()
        shown = {key: answer[key] for key in ("id", "name", "personal", "role")}
        assert shown == {"id": team.id, "name": "Team", "personal": False, "role": role}
        assert answer["storage"]["used"] == 0  # and its limit (test_workspace_storage.py)


def test_only_an_owner_renames_it(team):
    for name in ["adam", "eve", "vic"]:
        answer = client_of(name).patch(f"/api/workspaces/{team.id}", {"name": "Mine"}, "application/json")
        assert answer.status_code == 403
        assert "Team" in answer.json()["error"]["message"]
    answer = client_of("olga").patch(f"/api/workspaces/{team.id}", {"name": "Sales"}, "application/json")
    assert answer.status_code == 200
    assert Workspace.objects.get(id=team.id).name == "Sales"


def test_only_an_owner_deletes_it_and_only_when_it_is_empty(team):
    AnalysisSession.objects.create(owner=user("eve"), workspace=team, model="m")
    assert client_of("adam").delete(f"/api/workspaces/{team.id}").status_code == 403
    refused = client_of("olga").delete(f"/api/workspaces/{team.id}")
    assert refused.status_code == 409
    assert "1 session(s)" in refused.json()["error"]["message"]
    team.sessions.all().delete()
    assert client_of("olga").delete(f"/api/workspaces/{team.id}").status_code == 200
    assert not Workspace.objects.filter(id=team.id).exists()


def test_a_personal_workspace_cannot_be_deleted(mallory):
    personal = mallory.personal_workspace
    answer = bearer_client(mallory).delete(f"/api/workspaces/{personal.id}")
    assert answer.status_code == 409
    assert Workspace.objects.filter(id=personal.id).exists()
