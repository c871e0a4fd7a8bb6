"""The role rules: every action against every role (and no role), and the refusal's sentence."""

from __future__ import annotations

import pytest

from analyst.models import AnalysisSession, Workspace
from analyst.models.workspaces import Role
from analyst.workspaces.roles import Action, may, refusal, role_of, workspace_of

VI, ED, AD, OW = Role.VIEWER, Role.EDITOR, Role.ADMIN, Role.OWNER
# The roles allowed each action (deleting a session: see the test below).
ALLOWED = {
    Action.READ: {VI, ED, AD, OW},
    Action.EXPORT: {VI, ED, AD, OW},
    Action.FORK: {VI, ED, AD, OW},
    Action.CREATE_SESSION: {ED, AD, OW},
    Action.ASK: {ED, AD, OW},
    Action.RUN_CELL: {ED, AD, OW},
    Action.UPLOAD: {ED, AD, OW},
    Action.RESTART: {ED, AD, OW},
    Action.RENAME_SESSION: {ED, AD, OW},
    Action.SESSION_SETTINGS: {ED, AD, OW},
    Action.SHARE: {ED, AD, OW},
    Action.SCHEDULE: {ED, AD, OW},
    Action.COMMENT: {VI, ED, AD, OW},
    Action.DELETE_SESSION: {AD, OW},
    Action.MANAGE_MEMBERS: {AD, OW},
    Action.MANAGE_CONNECTIONS: {AD, OW},
    Action.MANAGE_SETTINGS: {AD, OW},
    Action.RENAME_WORKSPACE: {OW},
    Action.DELETE_WORKSPACE: {OW},
}


def test_the_matrix_names_every_action():
    assert set(ALLOWED) == set(Action)


@pytest.mark.parametrize("action", list(Action))
@pytest.mark.parametrize("role", [None, *Role])
def test_each_role_may_exactly_its_actions(role, action):
    assert may(role, action) is (role in ALLOWED[action])


@pytest.mark.parametrize("role", [None, *Role])
def test_deleting_a_session_takes_its_owner_or_an_admin(role):
    expected = role in {ED, AD, OW}  # an editor deletes what they made; a viewer nothing
    assert may(role, Action.DELETE_SESSION, owns_session=True) is expected


def test_the_refusals_say_whom_to_ask():
    team = Workspace(name="Sales")
    viewer = "viewers may read this session, not change it: ask an editor or an admin of Sales"
    assert refusal(VI, Action.ASK, team) == viewer
    assert refusal(VI, Action.CREATE_SESSION, team) == (
        "viewers may read the sessions of Sales, not make one: ask an editor or an admin of Sales"
    )
    assert refusal(VI, Action.MANAGE_MEMBERS, team) == (
        "only an admin or an owner of Sales may manage members: ask one of them"
    )  # not a session's change: what it takes, whoever asks
    assert refusal(ED, Action.DELETE_SESSION, team) == (
        "editors may delete only the sessions they made: ask an admin of Sales"
    )
    assert refusal(ED, Action.MANAGE_MEMBERS, team) == (
        "only an admin or an owner of Sales may manage members: ask one of them"
    )
    owners_only = "only an owner of Sales may delete it: ask one of its owners"
    assert refusal(AD, Action.DELETE_WORKSPACE, team) == owners_only
    assert refusal(None, Action.READ, team) == "you are not a member of Sales"


@pytest.mark.django_db
def test_role_of_and_workspace_of(team, mallory):
    from tests.workspaces.conftest import user

    assert role_of(user("vic"), team) == VI
    assert role_of(user("olga"), team) == OW
    assert role_of(mallory, team) is None
    in_team = AnalysisSession.objects.create(owner=user("eve"), workspace=team, model="m")
    personal = AnalysisSession.objects.create(owner=mallory, model="m")
    assert workspace_of(in_team) == team
    assert workspace_of(personal) == mallory.personal_workspace
    assert role_of(mallory, workspace_of(personal)) == OW
