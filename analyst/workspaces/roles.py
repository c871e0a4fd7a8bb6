"""The role rules as data: which action needs which role in a workspace, and what a refusal says.

Nothing here enforces anything; the views and services ask ``may`` and answer with ``refusal``.
"""

from __future__ import annotations

from enum import StrEnum

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from analyst.models import AnalysisSession, Membership, Workspace
from analyst.models.workspaces import Role

RANK = {Role.VIEWER: 0, Role.EDITOR: 1, Role.ADMIN: 2, Role.OWNER: 3}


class Action(StrEnum):
    READ = "read"
    EXPORT = "export"
    FORK = "fork"
    CREATE_SESSION = "create session"
    ASK = "ask"
    RUN_CELL = "run cell"
    UPLOAD = "upload"
    RESTART = "restart"
    RENAME_SESSION = "rename session"
    # Its model, privacy, cell approval, secrets and attached connections.
    SESSION_SETTINGS = "change session settings"
    SHARE = "share"  # share links and published reports
    SCHEDULE = "schedule"  # runs with other values, now or on a schedule
    COMMENT = "comment"
    DELETE_SESSION = "delete session"
    MANAGE_MEMBERS = "manage members"
    MANAGE_CONNECTIONS = "manage connections"
    MANAGE_SETTINGS = "manage settings"
    RENAME_WORKSPACE = "rename workspace"
    DELETE_WORKSPACE = "delete workspace"


# The least role each action needs. Deleting a session also needs to own it, below admin.
LEAST_ROLE: dict[Action, Role] = {
    Action.READ: Role.VIEWER,
    Action.EXPORT: Role.VIEWER,
    Action.FORK: Role.VIEWER,
    Action.CREATE_SESSION: Role.EDITOR,
    Action.ASK: Role.EDITOR,
    Action.RUN_CELL: Role.EDITOR,
    Action.UPLOAD: Role.EDITOR,
    Action.RESTART: Role.EDITOR,
    Action.RENAME_SESSION: Role.EDITOR,
    Action.SESSION_SETTINGS: Role.EDITOR,
    Action.SHARE: Role.EDITOR,
    Action.SCHEDULE: Role.EDITOR,
    Action.COMMENT: Role.VIEWER,
    Action.DELETE_SESSION: Role.EDITOR,
    Action.MANAGE_MEMBERS: Role.ADMIN,
    Action.MANAGE_CONNECTIONS: Role.ADMIN,
    Action.MANAGE_SETTINGS: Role.ADMIN,
    Action.RENAME_WORKSPACE: Role.OWNER,
    Action.DELETE_WORKSPACE: Role.OWNER,
}


def at_least(role: Role | str | None, least: Role) -> bool:
    return role is not None and RANK[Role(role)] >= RANK[least]


def may(role: Role | str | None, action: Action, *, owns_session: bool = False) -> bool:
    """Whether a member of ``role`` (None: not a member) may do ``action``; ``owns_session`` says
    whether the session acted on is theirs (only deleting one asks)."""
    if not at_least(role, LEAST_ROLE[action]):
        return False
    if action is Action.DELETE_SESSION:
        return owns_session or at_least(role, Role.ADMIN)
    return True


def refusal(role: Role | str | None, action: Action, workspace: Workspace) -> str:
    """The sentence a refused member reads: what their role allows, and whom to ask."""
    name = workspace.name
    if role is None:
        return f"you are not a member of {name}"
    if Role(role) == Role.VIEWER and action is Action.CREATE_SESSION:
        return f"viewers may read the sessions of {name}, not make one: ask an editor or an admin of {name}"
    if Role(role) == Role.VIEWER and LEAST_ROLE[action] == Role.EDITOR:
        return f"viewers may read this session, not change it: ask an editor or an admin of {name}"
    if action is Action.DELETE_SESSION:
        return f"editors may delete only the sessions they made: ask an admin of {name}"
    if LEAST_ROLE[action] == Role.ADMIN:
        return f"only an admin or an owner of {name} may {action}: ask one of them"
    return f"only an owner of {name} may {action.split()[0]} it: ask one of its owners"


def role_of(user: AbstractBaseUser | AnonymousUser, workspace: Workspace) -> Role | None:
    """The user's role in the workspace; None for a non-member (and for no one signed in)."""
    if not user.is_authenticated:
        return None
    role = Membership.objects.filter(workspace=workspace, user=user).values_list("role", flat=True).first()
    return Role(role) if role is not None else None


def personal_workspace(user: AbstractBaseUser) -> Workspace:
    return Workspace.objects.get(personal_of=user)


def workspace_of(session: AnalysisSession) -> Workspace:
    """The workspace the session lives in: its own, or (null) its owner's personal one."""
    if session.workspace_id is not None:
        return session.workspace
    return Workspace.objects.get(personal_of_id=session.owner_id)
