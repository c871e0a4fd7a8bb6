"""A workspace's connections: added, changed, tested and deleted by its admins and owners, read by
every member and listed with their workspace, attached only to that workspace's sessions (by an
editor or more); an editor or a viewer who tries to manage one gets 403 with the sentence, a
stranger finds nothing."""

from __future__ import annotations

import pytest

from analyst.connections import attachments, registry
from analyst.connections.kinds import BadConnection
from analyst.models import AnalysisSession, Connection, SessionConnection, Workspace
from analyst.sessions import sessions
from tests.connections.conftest import SECRET, WAREHOUSE, make_connection, patch_json, post_json
from tests.workspaces.conftest import bearer_client, client_of, team, user

__all__ = ["team"]  # the fixture, as the workspaces' tests have it

pytestmark = pytest.mark.django_db
MANAGERS = ["olga", "adam"]
NOT_MANAGERS = ["eve", "vic"]
REFUSAL = "only an admin or an owner of Team may manage connections: ask one of them"


def team_connection(team: Workspace, **fields: object) -> Connection:
    return registry.do_create(owner=user("olga"), fields={**WAREHOUSE, **fields}, workspace=team)


def team_session(team: Workspace, owner: str) -> AnalysisSession:
    return sessions.do_create(owner=user(owner), model=None, title="Q3", workspace=team)


@pytest.mark.parametrize("name", MANAGERS)
def test_an_admin_or_owner_adds_one_to_the_workspace(team, name):
    made = post_json(client_of(name), "/api/connections", {**WAREHOUSE, "workspace": team.id})
    assert made.status_code == 201, made.content
    assert made.json()["connection"]["workspace"] == {"id": team.id, "name": "Team"}
    assert SECRET not in made.content.decode()
    connection = Connection.objects.get()
    assert (connection.workspace, connection.owner) == (team, user(name))


@pytest.mark.parametrize("name", NOT_MANAGERS)
def test_an_editor_or_viewer_may_not_add_one(team, name):
    refused = post_json(client_of(name), "/api/connections", {**WAREHOUSE, "workspace": team.id})
    assert refused.status_code == 403
    assert refused.json()["error"] == {"code": "forbidden", "message": REFUSAL}
    assert not Connection.objects.exists()


def test_a_stranger_finds_no_workspace_to_add_one_to(team, mallory):
    refused = post_json(bearer_client(mallory), "/api/connections", {**WAREHOUSE, "workspace": team.id})
    assert refused.status_code == 404
    assert not Connection.objects.exists()


def test_without_a_workspace_or_with_the_personal_one_it_is_the_users_own(team):
    eve = user("eve")
    post_json(client_of("eve"), "/api/connections", WAREHOUSE)
    made = post_json(client_of("eve"), "/api/connections", {**WAREHOUSE, "name": "crm"})
    personal = post_json(
        client_of("eve"),
        "/api/connections",
        {**WAREHOUSE, "name": "mine", "workspace": eve.personal_workspace.id},
    )
    assert made.status_code == personal.status_code == 201
    assert personal.json()["connection"]["workspace"] == {"id": eve.personal_workspace.id, "name": "Personal"}
    assert list(Connection.objects.values_list("workspace", flat=True)) == [None, None, None]


def test_names_are_unique_within_the_workspace_and_apart_from_a_members_own(team):
    team_connection(team)
    again = post_json(client_of("adam"), "/api/connections", {**WAREHOUSE, "workspace": team.id})
    assert again.status_code == 400
    assert again.json()["error"] == {
        "code": "name_taken",
        "message": "Team already has a connection named 'warehouse'",
    }
    own = post_json(client_of("adam"), "/api/connections", WAREHOUSE)
    assert own.status_code == 201, own.content


def test_each_member_lists_their_own_and_their_workspaces(team, mallory):
    shared = team_connection(team)
    own = make_connection(user("vic"), name="notes")
    make_connection(mallory, name="elsewhere")
    listed = client_of("vic").get("/api/connections").json()["connections"]
    assert [(c["id"], c["workspace"]["name"]) for c in listed] == [(own.id, "Personal"), (shared.id, "Team")]
    assert all(c["has_secret"] and "secret" not in c for c in listed)

    one = client_of("vic").get(f"/api/connections?workspace={team.id}").json()["connections"]
    assert [c["id"] for c in one] == [shared.id]
    personal = user("vic").personal_workspace.id
    assert [
        c["id"] for c in client_of("vic").get(f"/api/connections?workspace={personal}").json()["connections"]
    ] == [own.id]
    stranger = bearer_client(mallory)
    assert [c["name"] for c in stranger.get("/api/connections").json()["connections"]] == ["elsewhere"]
    assert stranger.get(f"/api/connections?workspace={team.id}").status_code == 404
    assert stranger.get(f"/api/connections?workspace={personal}").status_code == 404


@pytest.mark.parametrize("name", ["olga", "adam", "eve", "vic"])
def test_every_member_reads_one(team, name):
    shared = team_connection(team)
    read = client_of(name).get(f"/api/connections/{shared.id}")
    assert read.status_code == 200
    assert read.json()["connection"]["name"] == "warehouse"


@pytest.mark.parametrize("name", MANAGERS)
def test_an_admin_or_owner_changes_tests_and_deletes_one(team, name, no_sandboxd):
    shared = team_connection(team)
    client = client_of(name)
    changed = patch_json(client, f"/api/connections/{shared.id}", {"read_only": False})
    assert changed.status_code == 200, changed.content
    tested = client.post(f"/api/connections/{shared.id}/test")
    assert tested.status_code == 200
    assert tested.json()["category"] == "unavailable"  # no sandbox could start for it here
    assert client.delete(f"/api/connections/{shared.id}").status_code == 204
    assert not Connection.objects.exists()


@pytest.mark.parametrize("name", NOT_MANAGERS)
def test_an_editor_or_viewer_may_not_change_test_or_delete_one(team, name):
    shared = team_connection(team)
    client = client_of(name)
    for refused in (
        patch_json(client, f"/api/connections/{shared.id}", {"read_only": False}),
        client.post(f"/api/connections/{shared.id}/test"),
        client.delete(f"/api/connections/{shared.id}"),
    ):
        assert refused.status_code == 403
        assert refused.json()["error"] == {"code": "forbidden", "message": REFUSAL}
    shared.refresh_from_db()
    assert shared.read_only is True and shared.checked == {}


def test_a_stranger_finds_none_of_it(team, mallory):
    shared = team_connection(team)
    client = bearer_client(mallory)
    for answer in (
        client.get(f"/api/connections/{shared.id}"),
        patch_json(client, f"/api/connections/{shared.id}", {"read_only": False}),
        client.post(f"/api/connections/{shared.id}/test"),
        client.delete(f"/api/connections/{shared.id}"),
    ):
        assert answer.status_code == 404
    assert Connection.objects.filter(id=shared.id, read_only=True).exists()


@pytest.mark.parametrize("name", ["olga", "adam", "eve"])
def test_an_editor_or_more_attaches_it_to_a_session_of_the_workspace(team, name, no_sandboxd):
    shared = team_connection(team)
    session = team_session(team, "olga")
    attached = post_json(client_of(name), f"/api/sessions/{session.id}/connections", {"name": "warehouse"})
    assert attached.status_code == 201, attached.content
    assert list(SessionConnection.objects.values_list("session", "connection")) == [(session.id, shared.id)]


def test_a_viewer_may_not_attach_it(team):
    team_connection(team)
    session = team_session(team, "olga")
    refused = post_json(client_of("vic"), f"/api/sessions/{session.id}/connections", {"name": "warehouse"})
    assert refused.status_code == 403
    assert not SessionConnection.objects.exists()


def test_it_serves_no_session_outside_the_workspace(team, no_sandboxd):
    team_connection(team)
    other = Workspace.objects.create(name="Other")
    other.memberships.create(user=user("olga"), role="owner")
    mine = sessions.do_create(owner=user("olga"), model=None, title="mine", workspace=None)
    theirs = sessions.do_create(owner=user("olga"), model=None, title="theirs", workspace=other)
    for session, said in [
        (mine, "you have no connection named 'warehouse' (yours: none)"),
        (
            theirs,
            "no connection named 'warehouse' may be used in this session of Other (those that may: none)",
        ),
    ]:
        refused = post_json(
            client_of("olga"), f"/api/sessions/{session.id}/connections", {"name": "warehouse"}
        )
        assert refused.status_code == 404
        assert refused.json()["error"]["message"] == said
    assert not SessionConnection.objects.exists()


def test_a_members_own_connection_goes_only_to_the_sessions_they_own(team, no_sandboxd):
    make_connection(user("eve"), name="mine")
    hers, olgas = team_session(team, "eve"), team_session(team, "olga")
    assert (
        post_json(client_of("eve"), f"/api/sessions/{hers.id}/connections", {"name": "mine"}).status_code
        == 201
    )
    refused = post_json(client_of("eve"), f"/api/sessions/{olgas.id}/connections", {"name": "mine"})
    assert refused.status_code == 404
    assert list(SessionConnection.objects.values_list("session", flat=True)) == [hers.id]


def test_a_session_uses_one_connection_of_a_name(team, no_sandboxd):
    team_connection(team)
    own = make_connection(user("eve"))  # her own "warehouse" too
    session = team_session(team, "eve")
    first = post_json(client_of("eve"), f"/api/sessions/{session.id}/connections", {"name": "warehouse"})
    assert first.status_code == 201
    assert first.json()["connection"]["workspace"]["name"] == "Team"  # the workspace's comes first
    with pytest.raises(BadConnection, match="uses another connection named 'warehouse' already"):
        attachments.do_attach(session=session, connection=own)
    assert SessionConnection.objects.count() == 1


def test_a_copy_keeps_a_workspaces_connection_only_in_that_workspace(team):
    shared, own = team_connection(team), make_connection(user("olga"), name="mine")
    source = team_session(team, "olga")
    for connection in (shared, own):
        SessionConnection.objects.create(session=source, connection=connection)
    by_an_editor = team_session(team, "eve")  # a branch or run by another member stays in Team
    into_her_own = sessions.do_create(owner=user("eve"), model=None, title="fork", workspace=None)
    by_its_owner = sessions.do_create(owner=user("olga"), model=None, title="fork", workspace=None)
    for target in (by_an_editor, into_her_own, by_its_owner):
        attachments.copy_attachments(source, target)
    assert [c.name for c in attachments.attached(by_an_editor)] == ["warehouse"]
    assert attachments.attached(into_her_own) == []
    assert [c.name for c in attachments.attached(by_its_owner)] == ["mine"]
