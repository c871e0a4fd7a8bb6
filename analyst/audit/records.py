"""Recording an action in the audit log: one small INSERT, which never holds up the action (a
failed one is logged and the action goes on)."""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.http import HttpRequest

from analyst.audit.addresses import client_address
from analyst.audit.current_request import current
from analyst.models import AnalysisSession, AuditEntry, Connection, Membership, Workspace

log = logging.getLogger(__name__)

ACTIONS = frozenset(
    {
        "sign_in",
        "sign_in_failed",
        "ask",
        "cell_run",
        "upload",
        "download",
        "export",
        "share_create",
        "share_revoke",
        "fork",
        "connection_create",
        "connection_test",
        "connection_attach",
        "connection_detach",
        "connection_use",
        "secret_set",
        "secret_delete",
        "member_add",
        "member_remove",
        "member_role",
        "workspace_instructions",
        "workspace_privacy",
        "workspace_storage",
        "comment_add",
        "comment_delete",
    }
)


def record(
    action: str,
    *,
    user: AbstractBaseUser | AnonymousUser | None,
    workspace: Workspace | None,
    target: str = "",
    detail: dict[str, Any] | None = None,
    request: HttpRequest | None = None,
) -> AuditEntry | None:
    """Store that ``user`` (None or anonymous: nobody signed in, say a share link's visitor) did
    ``action`` (one of ACTIONS) to ``target`` in ``workspace``, from the address of ``request``
    (by default the request being served, if any). Returns the entry, or None when it could not
    be stored (logged)."""
    if action not in ACTIONS:
        raise ValueError(f"unknown audit action {action!r}")
    request = request if request is not None else current()
    known = user if user is not None and user.is_authenticated else None
    entry = AuditEntry(
        workspace=workspace,
        user=known,
        username=known.get_username() if known is not None else "",
        action=action,
        target=target[:200],
        detail=detail or {},
        address=client_address(request),
    )
    try:
        with transaction.atomic():  # a savepoint: a failure leaves the action's transaction usable
            entry.save()
    except Exception:  # whatever failed, the action goes on
        log.exception("audit entry %s on %s by %s not stored", action, target, entry.username or "nobody")
        return None
    return entry


def workspace_of_session(session: AnalysisSession) -> Workspace | None:
    """The session's workspace: its own, else its owner's personal one."""
    if session.workspace_id is not None:
        return session.workspace
    return personal_workspace(session.owner_id)


def workspace_of_connection(connection: Connection) -> Workspace | None:
    if connection.workspace_id is not None:
        return connection.workspace
    return personal_workspace(connection.owner_id)


def personal_workspace(user_id: object) -> Workspace | None:
    return Workspace.objects.filter(personal_of_id=user_id).first()


def session_target(session: AnalysisSession) -> str:
    return f"session:{session.id}"


def connection_target(connection: Connection) -> str:
    return f"connection:{connection.id}"


def record_for_session(
    action: str,
    session: AnalysisSession,
    *,
    user: AbstractBaseUser | AnonymousUser | None = None,
    detail: dict[str, Any] | None = None,
) -> AuditEntry | None:
    """``record`` for an action on ``session``, in its workspace, by ``user`` (by default whoever
    the request being served is signed in as)."""
    return record(
        action,
        user=user if user is not None else requester(),
        workspace=workspace_of_session(session),
        target=session_target(session),
        detail=detail,
    )


def record_for_connection(
    action: str,
    connection: Connection,
    *,
    user: AbstractBaseUser | AnonymousUser | None = None,
    detail: dict[str, Any] | None = None,
) -> AuditEntry | None:
    """``record`` for an action on ``connection``, in its workspace (its name always in the
    detail), by ``user`` (by default whoever the request being served is signed in as)."""
    return record(
        action,
        user=user if user is not None else requester(),
        workspace=workspace_of_connection(connection),
        target=connection_target(connection),
        detail={"name": connection.name, **(detail or {})},
    )


def requester() -> AbstractBaseUser | AnonymousUser | None:
    """Whom the request being served is signed in as (anonymous, or None outside a request)."""
    return getattr(current(), "user", None)


def code_digest(code: str) -> str:
    """What the log keeps of a cell: its code's sha256, never the code."""
    return hashlib.sha256(code.encode()).hexdigest()


def record_membership(
    action: str, membership: Membership, *, by: AbstractBaseUser, detail: dict[str, Any] | None = None
) -> AuditEntry | None:
    """A member added, removed (or gone of their own accord) or given another role, by ``by``: the
    member named, and the role they have (or had)."""
    return record(
        action,
        user=by,
        workspace=membership.workspace,
        target=f"user:{membership.user_id}",
        detail={"username": membership.user.get_username(), "role": membership.role, **(detail or {})},
    )
