"""Every endpoint against every role of a team workspace and a stranger, generated from the URL
configuration: a route the rules below do not name fails the first test, so no endpoint lands
without a decision on who may use it.

A session's routes and a workspace's are called by each persona (olga owns the workspace, adam
is an admin, eve edits, vic views, mallory is a stranger): a stranger gets the 404 that says
nothing exists, a member below the least role a 403 with its sentence, and a member at or above
it anything else (a 400 for the empty body, a 409 for a kernel that never ran: what follows the
check, which the route's own tests cover).
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.core.files.base import ContentFile
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from analyst.models import (
    AnalysisSession,
    Artifact,
    Membership,
    Run,
    ShareLink,
    Turn,
    Workspace,
    WorkspaceInvitation,
)
from analyst.models.workspaces import Role
from analyst.workspaces.roles import LEAST_ROLE, RANK, Action
from tests.workspaces.conftest import bearer_client, make_user, user

pytestmark = pytest.mark.django_db

PERSONAS = {"olga": Role.OWNER, "adam": Role.ADMIN, "eve": Role.EDITOR, "vic": Role.VIEWER, "mallory": None}

A = Action
# The API's session routes: each method's action (sessions.get_for decides).
SESSION_API = {
    "api/sessions/<uuid:session_id>": {
        "GET": A.READ,
        "PATCH": A.SESSION_SETTINGS,
        "DELETE": A.DELETE_SESSION,
    },
    "api/sessions/<uuid:session_id>/messages": {"POST": A.ASK},
    "api/sessions/<uuid:session_id>/cells": {"POST": A.RUN_CELL},
    "api/sessions/<uuid:session_id>/cancel": {"POST": A.RESTART},
    "api/sessions/<uuid:session_id>/kernel/restart": {"POST": A.RESTART},
    "api/sessions/<uuid:session_id>/kernel/interrupt": {"POST": A.RESTART},
    "api/sessions/<uuid:session_id>/variables": {"GET": A.READ},
    "api/sessions/<uuid:session_id>/variables/<str:name>": {"GET": A.READ},
    "api/sessions/<uuid:session_id>/variables/<str:name>/rows": {"GET": A.READ},
    "api/sessions/<uuid:session_id>/variables/<str:name>/rows.csv": {"GET": A.READ},
    "api/sessions/<uuid:session_id>/kernel/run-all": {"POST": A.RUN_CELL},
    "api/sessions/<uuid:session_id>/rerun": {"POST": A.RUN_CELL},
    "api/sessions/<uuid:session_id>/fork": {"POST": A.FORK},
    "api/sessions/<uuid:session_id>/parameters": {"GET": A.READ, "PUT": A.SCHEDULE},
    "api/sessions/<uuid:session_id>/runs": {"GET": A.READ, "POST": A.SCHEDULE},
    "api/runs/<uuid:run_id>": {"GET": A.READ},
    "api/sessions/<uuid:session_id>/schedules": {"GET": A.READ, "POST": A.SCHEDULE},
    "api/sessions/<uuid:session_id>/publish": {"GET": A.READ, "POST": A.SHARE, "DELETE": A.SHARE},
    "api/sessions/<uuid:session_id>/turns/<int:turn_id>/regenerate": {"POST": A.ASK},
    "api/sessions/<uuid:session_id>/turns/<int:turn_id>/branch": {"POST": A.ASK},
    "api/sessions/<uuid:session_id>/pending/<str:tool_call_id>/approve": {"POST": A.RUN_CELL},
    "api/sessions/<uuid:session_id>/pending/<str:tool_call_id>/reject": {"POST": A.RUN_CELL},
    "api/sessions/<uuid:session_id>/export": {"GET": A.EXPORT},
    "api/sessions/<uuid:session_id>/files": {"GET": A.READ, "POST": A.UPLOAD},
    "api/sessions/<uuid:session_id>/files/download": {"GET": A.READ},
    "api/sessions/<uuid:session_id>/files/<int:file_id>": {"PATCH": A.UPLOAD, "DELETE": A.UPLOAD},
    "api/sessions/<uuid:session_id>/files/<int:file_id>/retry": {"POST": A.UPLOAD},
    "api/sessions/<uuid:session_id>/files/<int:file_id>/options": {"POST": A.UPLOAD},
    "api/sessions/<uuid:session_id>/events": {"GET": A.READ},
    "api/sessions/<uuid:session_id>/secrets": {"GET": A.READ, "POST": A.SESSION_SETTINGS},
    "api/sessions/<uuid:session_id>/secrets/<str:name>": {"DELETE": A.SESSION_SETTINGS},
    "api/sessions/<uuid:session_id>/connections": {"GET": A.READ, "POST": A.SESSION_SETTINGS},
    "api/sessions/<uuid:session_id>/connections/<int:connection_id>": {"DELETE": A.SESSION_SETTINGS},
    "api/artifacts/<uuid:artifact_id>": {"GET": A.READ},
    "api/sessions/<uuid:session_id>/comments": {"GET": A.READ, "POST": A.COMMENT},
    "api/sessions/<uuid:session_id>/comments/<int:comment_id>": {"DELETE": A.COMMENT},  # and its author's
}
# The session's pages, signed in with the login cookie.
SESSION_PAGES = {
    "sessions/<uuid:session_id>/": {"GET": A.READ},
    "sessions/<uuid:session_id>/rename": {"POST": A.RENAME_SESSION},
    "sessions/<uuid:session_id>/delete": {"POST": A.DELETE_SESSION},
    "sessions/<uuid:session_id>/fork": {"POST": A.FORK},
    "sessions/<uuid:session_id>/share": {"POST": A.SHARE},
    "sessions/<uuid:session_id>/share/<int:link_id>/revoke": {"POST": A.SHARE},
}
# A workspace's routes: the least role of each method (its owner renames and deletes it; admins
# manage members, invitations and read the audit log; any member reads it and its members).
WORKSPACE_API = {
    "api/workspaces/<int:workspace_id>": {"GET": Role.VIEWER, "PATCH": Role.OWNER, "DELETE": Role.OWNER},
    "api/workspaces/<int:workspace_id>/instructions": {"GET": Role.VIEWER, "PUT": Role.ADMIN},
    "api/workspaces/<int:workspace_id>/members": {"GET": Role.VIEWER, "POST": Role.ADMIN},
    "api/workspaces/<int:workspace_id>/members/<int:membership_id>": {
        "PATCH": Role.ADMIN,
        "DELETE": Role.ADMIN,
    },
    "api/workspaces/<int:workspace_id>/invitations": {"GET": Role.ADMIN, "POST": Role.ADMIN},
    "api/workspaces/<int:workspace_id>/invitations/<int:invitation_id>": {"DELETE": Role.ADMIN},
    "api/workspaces/<int:workspace_id>/audit": {"GET": Role.ADMIN},
    "api/workspaces/<int:workspace_id>/audit.jsonl": {"GET": Role.ADMIN},
}
WORKSPACE_PAGES = {
    "workspaces/<int:workspace_id>/": {"GET": Role.VIEWER, "POST": Role.ADMIN},
    "workspaces/<int:workspace_id>/audit/": {"GET": Role.ADMIN},
}
# Routes no workspace role guards, and why: each is the caller's own, or public by design.
NOT_A_WORKSPACES = {
    "": "the start page",
    "accounts/signup/": "public: sign-up",
    "accounts/login/": "public: sign-in",
    "accounts/logout/": "the caller's own sign-out",
    "oidc/authenticate/": "public: single sign-on's start",
    "oidc/callback/": "public: single sign-on's end, checked by state and nonce (tests/sso)",
    "sessions/": "lists the caller's sessions, or a workspace's they are a member of (tests/workspaces)",
    "sessions/new": "makes a session where the caller may (tests/workspaces/test_pages.py)",
    "sessions/sample": "makes a session of the caller's own",
    "settings/instructions/": "the caller's own instructions",
    "connections/": "the caller's connections and their workspaces' (tests/connections)",
    "workspaces/": "the caller's workspaces",
    "invitations/<str:token>/": "whoever holds the invitation's token (tests/workspaces)",
    "settings/tokens/": "the caller's own API tokens",
    "settings/tokens/<int:token_id>/revoke": "the caller's own API tokens",
    "s/<str:token>/": "public: a share link, by its token",
    "s/<str:token>/fork": "a share link's reader forks into their own space",
    "s/<str:token>/static": "public: a share link, by its token",
    "r/<str:token>.json": "a published report, by its token (sign-in when it asks for it)",
    "r/<str:token>": "a published report, by its token (sign-in when it asks for it)",
    "livez": "public: liveness",
    "healthz": "public: health",
    "metrics": "its own token (tests/ops)",
    "api/sessions": "lists and makes sessions where the caller may (tests/workspaces)",
    "api/instructions": "the caller's own instructions",
    "api/connections": "the caller's connections and their workspaces' (tests/connections)",
    "api/connections/<int:connection_id>": "a connection's workspace role (tests/connections)",
    "api/connections/<int:connection_id>/test": "a connection's workspace role (tests/connections)",
    "api/schedules/<int:schedule_id>": "its maker's, while they may still schedule (tests/schedules)",
    "api/workspaces": "the caller's workspaces; any account makes one",
    "api/invitations/<str:token>/accept": "whoever holds the invitation's token (tests/workspaces)",
    "api/shared/<str:token>/events": "public: a share link, by its token",
    "api/shared/<str:token>/artifacts/<uuid:artifact_id>": "public: a share link, by its token",
    "api/shared/<str:token>/files": "public: a share link that allows downloads",
    "api/shared/<str:token>/files/download": "public: a share link that allows downloads",
    "api/notifications": "the caller's own notifications (tests/collab)",
    "api/notifications/read": "the caller's own notifications (tests/collab)",
    "api/notifications/<int:notification_id>/read": "the caller's own notifications (tests/collab)",
}
RULES = {**SESSION_API, **SESSION_PAGES, **WORKSPACE_API, **WORKSPACE_PAGES}


def routes(patterns: list[Any], prefix: str = "") -> list[str]:
    found = []
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            found += routes(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            found.append(prefix + str(pattern.pattern))
    return found


def app_routes() -> set[str]:
    return {route for route in routes(get_resolver().url_patterns) if not route.startswith("admin/")}


def test_every_route_has_a_rule():
    unruled = app_routes() - set(RULES) - set(NOT_A_WORKSPACES)
    assert not unruled, f"routes with no rule of who may use them: {sorted(unruled)}"
    assert not (set(RULES) | set(NOT_A_WORKSPACES)) - app_routes(), "rules for routes that are gone"
    assert not set(RULES) & set(NOT_A_WORKSPACES)


def allowed(role: Role | None, least: Role) -> bool:
    return role is not None and RANK[role] >= RANK[least]


class Team:
    """The workspace, one session of its owner's in it, and the objects its routes name."""

    def __init__(self) -> None:
        self.workspace = Workspace.objects.create(name="Team")
        for name, role in PERSONAS.items():
            person = make_user(name)
            if role is not None:
                Membership.objects.create(workspace=self.workspace, user=person, role=role)
        walt = make_user("walt")  # the member the member routes change
        self.walt = Membership.objects.create(workspace=self.workspace, user=walt, role=Role.VIEWER)
        self.session = AnalysisSession.objects.create(
            owner=user("olga"), workspace=self.workspace, model="anthropic/claude-test", title="Q3"
        )
        self.turn = Turn.objects.create(
            session=self.session, requested_by=user("olga"), kind="chat", input="hi"
        )
        made = AnalysisSession.objects.create(owner=user("olga"), workspace=self.workspace, model="m")
        run_turn = Turn.objects.create(session=made, requested_by=user("olga"), kind="replay", input="")
        self.run = Run.objects.create(
            source=self.session, session=made, turn=run_turn, requested_by=user("olga")
        )
        self.artifact = Artifact.objects.create(
            session=self.session, mime_type="image/png", file=ContentFile(b"\x89PNG", name="a.png"), size=4
        )
        self.link = ShareLink.objects.create(session=self.session)
        self.invitation = WorkspaceInvitation.objects.create(
            workspace=self.workspace,
            role=Role.VIEWER,
            digest=uuid.uuid4().hex,
            expires_at="2099-01-01T00:00Z",
        )

    def url(self, route: str) -> str:
        values = {
            "<uuid:session_id>": str(self.session.id),
            "<uuid:run_id>": str(self.run.id),
            "<uuid:artifact_id>": str(self.artifact.id),
            "<int:turn_id>": str(self.turn.id),
            "<int:workspace_id>": str(self.workspace.id),
            "<int:membership_id>": str(self.walt.id),
            "<int:invitation_id>": str(self.invitation.id),
            "<int:link_id>": str(self.link.id),
            "<int:file_id>": "1",
            "<int:comment_id>": "1",
            "<int:connection_id>": "1",
            "<str:name>": "df",
            "<str:tool_call_id>": "call_1",
        }
        for placeholder, value in values.items():
            route = route.replace(placeholder, value)
        return "/" + route


@pytest.fixture
def team_world(db: None) -> Team:
    return Team()


def call(client: Client, method: str, url: str) -> Any:
    return client.generic(method, url, "{}", content_type="application/json")


def page_client(name: str) -> Client:
    client = Client()
    client.force_login(user(name))
    return client


def cases(table: dict[str, dict[str, Any]]) -> list[Any]:
    return [
        pytest.param(route, method, rule, persona, id=f"{method} {route} as {persona}")
        for route, methods in table.items()
        for method, rule in methods.items()
        for persona in PERSONAS
    ]


def least_role(rule: Action | Role) -> Role:
    return LEAST_ROLE[rule] if isinstance(rule, Action) else rule


def text_of(answer: Any) -> str:
    if not answer.streaming:
        return answer.content.decode(errors="replace")
    try:
        return b"".join(answer.streaming_content).decode(errors="replace")
    finally:
        answer.close()


def expect(answer: Any, role: Role | None, rule: Action | Role, *, api: bool) -> None:
    body = text_of(answer)[:300]
    least = least_role(rule)
    if rule is Action.DELETE_SESSION:  # the session is olga's: an editor who did not make it may not
        least = Role.ADMIN
    if role is None:
        assert answer.status_code == 404, body
        return
    if not allowed(role, least):
        assert answer.status_code == 403, body
        if api:
            assert '"code": "forbidden"' in body
            assert "of Team" in body
        return
    refused_as_stranger = answer.status_code == 404 and (
        "no such session" in body or "no such workspace" in body
    )
    assert answer.status_code != 403 and not refused_as_stranger, (answer.status_code, body)


@pytest.mark.parametrize(("route", "method", "rule", "persona"), cases({**SESSION_API, **WORKSPACE_API}))
def test_the_api(team_world, route, method, rule, persona):
    answer = call(bearer_client(user(persona)), method, team_world.url(route))
    expect(answer, PERSONAS[persona], rule, api=True)


@pytest.mark.parametrize(("route", "method", "rule", "persona"), cases({**SESSION_PAGES, **WORKSPACE_PAGES}))
def test_the_pages(team_world, route, method, rule, persona):
    client = page_client(persona)
    url = team_world.url(route)
    answer = client.get(url) if method == "GET" else client.post(url, {"title": "Renamed"})
    expect(answer, PERSONAS[persona], rule, api=False)
    if answer.status_code == 403:
        assert b'data-testid="forbidden-why"' in answer.content
