"""Making a workspace, and its members: adding, changing a role, removing, leaving.

Admins manage editors and viewers; only an owner makes or removes admins and owners; a workspace
never loses its last owner; a personal workspace has its owner alone. Each ``do_*`` returns what
it changed, so callers (the audit log) can record the outcome.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from analyst.models import Membership, Workspace
from analyst.models.workspaces import Role
from analyst.workspaces.roles import Action, may, refusal, role_of

NAME_LENGTH = 100
MANAGED_BY_ADMINS = (Role.EDITOR, Role.VIEWER)


class WorkspaceError(Exception):
    """A refused change to a workspace or its members; ``str()`` says why in words."""


class NotAllowed(WorkspaceError):
    """The actor's role does not allow it (403)."""


class NotAMember(WorkspaceError):
    """The actor is not a member: the workspace is as if it did not exist (404)."""


class Invalid(WorkspaceError):
    """Bad input: a name, a role, a user that does not exist (400)."""


class Conflict(WorkspaceError):
    """The workspace's state refuses it: the last owner, a personal workspace, a member twice (409)."""


def check_name(name: object) -> str:
    if not isinstance(name, str) or not name.strip():
        raise Invalid("'name' must be a non-empty string")
    if len(name.strip()) > NAME_LENGTH:
        raise Invalid(f"'name' must be at most {NAME_LENGTH} characters")
    return name.strip()


def check_role(role: object) -> Role:
    if role not in Role.values:
        raise Invalid(f"'role' must be one of {', '.join(Role.values)}")
    return Role(str(role))


def check_member(user: AbstractBaseUser, workspace: Workspace) -> Role:
    """The user's role; NotAMember when they have none."""
    role = role_of(user, workspace)
    if role is None:
        raise NotAMember("no such workspace")
    return role


def check_may(user: AbstractBaseUser, workspace: Workspace, action: Action) -> Role:
    """The user's role when it allows ``action``; NotAMember or NotAllowed (with the sentence)."""
    role = check_member(user, workspace)
    if not may(role, action):
        raise NotAllowed(refusal(role, action, workspace))
    return role


def get_visible(user: AbstractBaseUser, workspace_id: object) -> tuple[Workspace, Role]:
    """A workspace the user is a member of, and their role; NotAMember for any other id."""
    try:
        workspace = Workspace.objects.get(id=int(str(workspace_id)))
    except (Workspace.DoesNotExist, ValueError):
        raise NotAMember("no such workspace") from None
    return workspace, check_member(user, workspace)


def workspaces_of(user: AbstractBaseUser) -> list[tuple[Workspace, Role]]:
    """The user's workspaces with their role in each: the personal one first, then by name."""
    found = Membership.objects.filter(user=user).select_related("workspace")
    pairs = [(m.workspace, Role(m.role)) for m in found]
    return sorted(
        pairs, key=lambda pair: (pair[0].personal_of_id != user.pk, pair[0].name.lower(), pair[0].id)
    )


@transaction.atomic
def do_create(*, creator: AbstractBaseUser, name: object) -> Workspace:
    """A team workspace; its creator becomes its owner."""
    workspace = Workspace.objects.create(name=check_name(name))
    Membership.objects.create(workspace=workspace, user=creator, role=Role.OWNER)
    return workspace


def do_rename(*, workspace: Workspace, by: AbstractBaseUser, name: object) -> Workspace:
    check_may(by, workspace, Action.RENAME_WORKSPACE)
    workspace.name = check_name(name)
    workspace.save(update_fields=["name"])
    return workspace


def do_delete(*, workspace: Workspace, by: AbstractBaseUser) -> None:
    """Delete a team workspace that holds nothing: its sessions and connections go first (each
    through its own deletion, which releases what it holds), so nothing is lost by accident."""
    check_may(by, workspace, Action.DELETE_WORKSPACE)
    if workspace.personal_of_id is not None:
        raise Conflict("a personal workspace goes only with its account")
    sessions, connections = workspace.sessions.count(), workspace.connections.count()
    if sessions or connections:
        raise Conflict(
            f"{workspace.name} still holds {sessions} session(s) and {connections} connection(s): "
            "delete them first"
        )
    workspace.delete()


def find_user(*, username: object = None, email: object = None) -> AbstractBaseUser:
    """The account named by exactly one of ``username`` or ``email`` (case aside for e-mail)."""
    users = get_user_model().objects
    if (username is None) == (email is None):
        raise Invalid("send either 'username' or 'email'")
    if username is not None:
        if not isinstance(username, str) or not username.strip():
            raise Invalid("'username' must be a non-empty string")
        user = users.filter(username=username.strip()).first()
        if user is None:
            raise Invalid(f"no account is named {username.strip()!r}")
        return user
    if not isinstance(email, str) or "@" not in email:
        raise Invalid("'email' must be an e-mail address")
    matching = list(users.filter(email__iexact=email.strip())[:2])
    if len(matching) != 1:
        raise Invalid(f"no single account has the e-mail address {email.strip()!r}")
    return matching[0]


def check_grant(
    *, workspace: Workspace, by: AbstractBaseUser, role: object, current: Role | None = None
) -> Role:
    """The role ``by`` may give (to a new member, or one now of ``current``): admins manage
    editors and viewers, owners anyone; a personal workspace takes no one."""
    actor = check_may(by, workspace, Action.MANAGE_MEMBERS)
    granted = check_role(role)
    if workspace.personal_of_id is not None:
        raise Conflict("a personal workspace has its owner alone: make a team workspace to share work")
    if actor != Role.OWNER and not (granted in MANAGED_BY_ADMINS and current in (None, *MANAGED_BY_ADMINS)):
        raise NotAllowed(f"only an owner of {workspace.name} makes or removes admins and owners")
    return granted


@transaction.atomic
def do_add(*, workspace: Workspace, by: AbstractBaseUser, user: AbstractBaseUser, role: object) -> Membership:
    granted = check_grant(workspace=workspace, by=by, role=role)
    if Membership.objects.filter(workspace=workspace, user=user).exists():
        raise Conflict(f"{user.get_username()} is a member of {workspace.name} already")
    return Membership.objects.create(workspace=workspace, user=user, role=granted)


def get_membership(workspace: Workspace, membership_id: object) -> Membership:
    try:
        return Membership.objects.select_related("user").get(workspace=workspace, id=int(str(membership_id)))
    except (Membership.DoesNotExist, ValueError):
        raise NotAMember("no such member") from None


@transaction.atomic
def do_change_role(*, membership: Membership, by: AbstractBaseUser, role: object) -> Membership:
    """The member's new role; the last owner keeps theirs."""
    membership = Membership.objects.select_for_update().get(id=membership.id)
    workspace = membership.workspace
    granted = check_grant(workspace=workspace, by=by, role=role, current=Role(membership.role))
    if membership.role == Role.OWNER and granted != Role.OWNER:
        _keep_an_owner(workspace, leaving=membership)
    membership.role = granted
    membership.save(update_fields=["role"])
    return membership


@transaction.atomic
def do_remove(*, membership: Membership, by: AbstractBaseUser) -> Membership:
    """Remove a member (not the last owner); returns the removed membership."""
    membership = Membership.objects.select_for_update().get(id=membership.id)
    workspace = membership.workspace
    actor = check_may(by, workspace, Action.MANAGE_MEMBERS)
    if actor != Role.OWNER and Role(membership.role) not in MANAGED_BY_ADMINS:
        raise NotAllowed(f"only an owner of {workspace.name} makes or removes admins and owners")
    _refuse_personal_owner(workspace, membership)
    if membership.role == Role.OWNER:
        _keep_an_owner(workspace, leaving=membership)
    membership.delete()
    return membership


@transaction.atomic
def do_leave(*, workspace: Workspace, user: AbstractBaseUser) -> Membership:
    """The user leaves the workspace (any member may, but its last owner)."""
    check_member(user, workspace)
    membership = Membership.objects.select_for_update().get(workspace=workspace, user=user)
    _refuse_personal_owner(workspace, membership)
    if membership.role == Role.OWNER:
        _keep_an_owner(workspace, leaving=membership)
    membership.delete()
    return membership


def _refuse_personal_owner(workspace: Workspace, membership: Membership) -> None:
    if workspace.personal_of_id == membership.user_id:
        raise Conflict("a personal workspace keeps its owner")


def _keep_an_owner(workspace: Workspace, *, leaving: Membership) -> None:
    owners = Membership.objects.select_for_update().filter(workspace=workspace, role=Role.OWNER)
    if not owners.exclude(id=leaving.id).exists():
        raise Conflict(f"{workspace.name} must keep an owner: make another member an owner first")
