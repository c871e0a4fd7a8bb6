"""/api/workspaces/<id>/members: adding, listing, changing roles, removing, leaving."""

from __future__ import annotations

import pytest

from analyst.models import Membership
from tests.workspaces.conftest import bearer_client, client_of, make_user, membership

pytestmark = pytest.mark.django_db


def members_of(workspace) -> dict[str, str]:
    return dict(Membership.objects.filter(workspace=workspace).values_list("user__username", "role"))


def post_member(name: str, workspace, body: dict):
    return client_of(name).post(f"/api/workspaces/{workspace.id}/members", body, "application/json")


def test_every_member_lists_the_members(team):
    answer = client_of("vic").get(f"/api/workspaces/{team.id}/members").json()["members"]
    assert [(m["username"], m["role"]) for m in answer] == [
        ("olga", "owner"),
        ("adam", "admin"),
        ("eve", "editor"),
        ("vic", "viewer"),
    ]
    assert answer[0]["id"] == membership(team, "olga").id


def test_an_admin_adds_by_username_or_email(team):
    make_user("nina"), make_user("otto")
    by_name = post_member("adam", team, {"username": "nina", "role": "editor"})
    assert by_name.status_code == 201
    assert by_name.json() == {"id": membership(team, "nina").id, "username": "nina", "role": "editor"}
    by_email = post_member("adam", team, {"email": "OTTO@example.test", "role": "viewer"})
    assert by_email.status_code == 201
    assert members_of(team)["otto"] == "viewer"


def test_adding_refuses_in_words(team, mallory):
    for body, status in [
        ({"username": "nobody", "role": "viewer"}, 400),
        ({"username": "mallory", "role": "chief"}, 400),
        ({"username": "mallory", "email": "mallory@example.test", "role": "viewer"}, 400),
        ({"role": "viewer"}, 400),
        ({"username": "vic", "role": "editor"}, 409),
    ]:
        answer = post_member("olga", team, body)
        assert answer.status_code == status, body
        assert answer.json()["error"]["message"]
    assert "mallory" not in members_of(team)
    assert members_of(team)["vic"] == "viewer"


def test_editors_and_viewers_may_not_manage_members(team, mallory):
    for name in ["eve", "vic"]:
        answer = post_member(name, team, {"username": "mallory", "role": "viewer"})
        assert answer.status_code == 403
        assert "Team" in answer.json()["error"]["message"]
    viewer = post_member("vic", team, {"username": "mallory", "role": "viewer"}).json()["error"]["message"]
    assert viewer == "only an admin or an owner of Team may manage members: ask one of them"
    assert "mallory" not in members_of(team)


def test_only_an_owner_makes_or_removes_admins_and_owners(team, mallory):
    assert post_member("adam", team, {"username": "mallory", "role": "admin"}).status_code == 403
    adam_api = client_of("adam")
    promote = adam_api.patch(
        f"/api/workspaces/{team.id}/members/{membership(team, 'eve').id}",
        {"role": "admin"},
        "application/json",
    )
    assert promote.status_code == 403
    assert (
        adam_api.delete(f"/api/workspaces/{team.id}/members/{membership(team, 'olga').id}").status_code == 403
    )
    assert members_of(team) == {"olga": "owner", "adam": "admin", "eve": "editor", "vic": "viewer"}
    olga_api = client_of("olga")
    demote = olga_api.patch(
        f"/api/workspaces/{team.id}/members/{membership(team, 'adam').id}",
        {"role": "viewer"},
        "application/json",
    )
    assert demote.json()["role"] == "viewer"
    assert post_member("olga", team, {"username": "mallory", "role": "owner"}).status_code == 201


def test_an_admin_changes_and_removes_editors_and_viewers(team):
    api = client_of("adam")
    changed = api.patch(
        f"/api/workspaces/{team.id}/members/{membership(team, 'vic').id}",
        {"role": "editor"},
        "application/json",
    )
    assert changed.status_code == 200
    assert members_of(team)["vic"] == "editor"
    removed = api.delete(f"/api/workspaces/{team.id}/members/{membership(team, 'eve').id}")
    assert removed.status_code == 200
    assert "eve" not in members_of(team)


def test_the_last_owner_is_never_removed_nor_demoted(team):
    api = client_of("olga")
    olga = membership(team, "olga")
    demote = api.patch(f"/api/workspaces/{team.id}/members/{olga.id}", {"role": "admin"}, "application/json")
    assert demote.status_code == 409
    assert "must keep an owner" in demote.json()["error"]["message"]
    assert api.delete(f"/api/workspaces/{team.id}/members/{olga.id}").status_code == 409
    assert members_of(team)["olga"] == "owner"
    api.patch(
        f"/api/workspaces/{team.id}/members/{membership(team, 'adam').id}",
        {"role": "owner"},
        "application/json",
    )
    assert api.delete(f"/api/workspaces/{team.id}/members/{olga.id}").status_code == 200  # she leaves
    assert "olga" not in members_of(team)


def test_any_member_leaves_by_deleting_their_own_membership(team):
    vic = membership(team, "vic")
    assert client_of("vic").delete(f"/api/workspaces/{team.id}/members/{vic.id}").status_code == 200
    assert "vic" not in members_of(team)
    assert client_of("vic").get(f"/api/workspaces/{team.id}").status_code == 404


def test_a_personal_workspace_refuses_members(mallory):
    make_user("nina")
    personal = mallory.personal_workspace
    api = bearer_client(mallory)
    answer = api.post(
        f"/api/workspaces/{personal.id}/members", {"username": "nina", "role": "viewer"}, "application/json"
    )
    assert answer.status_code == 409
    assert "personal workspace" in answer.json()["error"]["message"]
    own = Membership.objects.get(workspace=personal, user=mallory)
    assert api.delete(f"/api/workspaces/{personal.id}/members/{own.id}").status_code == 409
    assert members_of(personal) == {"mallory": "owner"}


def test_a_member_of_another_workspace_is_not_found(team, mallory):
    other = bearer_client(mallory).post("/api/workspaces", {"name": "Other"}, "application/json").json()
    foreign = Membership.objects.get(workspace_id=other["id"])
    answer = client_of("olga").delete(f"/api/workspaces/{team.id}/members/{foreign.id}")
    assert answer.status_code == 404
    assert Membership.objects.filter(id=foreign.id).exists()
