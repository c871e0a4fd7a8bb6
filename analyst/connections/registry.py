"""Connections, a user's own or a workspace's: made, changed and deleted (their fields checked by
kinds, their secret sealed), found by id or name among those the user may reach (their own, and
their workspaces', as their role there allows), and described for the API (never the secret)."""

from __future__ import annotations

import os
from typing import IO, Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.core.files import File
from django.db import IntegrityError, transaction
from django.db.models import Count, F, Q, QuerySet
from django.http import Http404

from analyst.audit import records as audit_records
from analyst.connections import kinds, sealing
from analyst.connections.kinds import BadConnection
from analyst.models import AnalysisSession, Connection, Workspace
from analyst.workspaces import roles
from analyst.workspaces.roles import Action

FIELDS = ("name", "kind", "url", "secret", "read_only", "options")
MAX_SECRET = 10_000
MAX_URL = 2000
# What changes where a connection leads, so what its last Test found no longer holds.
RETARGETING = ("kind", "url", "options", "secret")


class NameTaken(BadConnection):
    pass


def get_for(user: AbstractBaseUser, connection_id: object, action: Action = Action.READ) -> Connection:
    """The connection, when ``user`` may do ``action`` to it: their own, or one of a workspace
    whose role allows it. Http404 for anyone else (no hint that it exists); PermissionDenied,
    with the sentence the member reads, when their role does not allow ``action``."""
    try:
        connection = Connection.objects.select_related("workspace").get(id=connection_id)
    except (Connection.DoesNotExist, ValueError, TypeError):
        raise Http404("no such connection") from None
    if connection.workspace_id is None:
        if connection.owner_id != user.pk:
            raise Http404("no such connection")
        return connection
    role = roles.role_of(user, connection.workspace)
    if role is None:
        raise Http404("no such connection")
    if not roles.may(role, action):
        raise PermissionDenied(roles.refusal(role, action, connection.workspace))
    return connection


def get_named(user: AbstractBaseUser, name: object, *, session: AnalysisSession | None = None) -> Connection:
    """The connection called ``name`` that ``user`` may attach to ``session``: its workspace's
    first, then (a session of theirs, or none made yet) their own. Http404 naming those there are."""
    reachable = _attachable(user, session)
    first = F("workspace_id").asc(nulls_last=True)
    found = reachable.filter(name=name).order_by(first).first() if isinstance(name, str) else None
    if found is None:
        names = ", ".join(sorted(set(reachable.values_list("name", flat=True)))) or "none"
        if session is None or session.workspace_id is None:
            raise Http404(f"you have no connection named {name!r} (yours: {names})")
        where = session.workspace.name
        raise Http404(
            f"no connection named {name!r} may be used in this session of {where} (those that may: {names})"
        )
    return found


def _attachable(user: AbstractBaseUser, session: AnalysisSession | None) -> QuerySet[Connection]:
    """The user's own connections when the session is theirs (or not made yet), and those of the
    session's workspace; a workspace's connection goes only to a session in that workspace."""
    mine = Q(owner=user, workspace=None) if session is None or session.owner_id == user.pk else Q(pk__in=[])
    theirs = Q(workspace_id=session.workspace_id) if session and session.workspace_id else Q(pk__in=[])
    return Connection.objects.filter(mine | theirs)


def listed(user: AbstractBaseUser, *, workspace: Workspace | None = None) -> list[Connection]:
    """The user's own connections and those of each workspace they are a member of; only one
    workspace's when ``workspace`` is given (the user's personal one: their own)."""
    if workspace is None:
        shown = Q(owner=user, workspace=None) | Q(workspace__memberships__user=user)
    elif workspace.personal_of_id == user.pk:
        shown = Q(owner=user, workspace=None)
    else:
        shown = Q(workspace=workspace)
    found = Connection.objects.filter(shown).select_related("workspace", "owner__personal_workspace")
    return list(found.annotate(attached=Count("attachments", distinct=True)).order_by("name", "id"))


def check_workspace(user: AbstractBaseUser, workspace_id: object) -> Workspace | None:
    """The workspace a new connection of ``user``'s goes to: None (their own) for none or their
    personal one; else a workspace whose admins they are among. Http404 for one they are not a
    member of; PermissionDenied, saying whom to ask, when they may not manage its connections."""
    if workspace_id is None:
        return None
    try:
        workspace = Workspace.objects.get(id=int(str(workspace_id)))
    except (Workspace.DoesNotExist, ValueError):
        raise Http404("no such workspace") from None
    if workspace.personal_of_id == user.pk:
        return None
    role = roles.role_of(user, workspace)
    if role is None:
        raise Http404("no such workspace")
    if not roles.may(role, Action.MANAGE_CONNECTIONS):
        raise PermissionDenied(roles.refusal(role, Action.MANAGE_CONNECTIONS, workspace))
    return workspace


def do_create(
    *,
    owner: AbstractBaseUser,
    fields: dict[str, Any],
    file: IO[bytes] | None = None,
    workspace: Workspace | None = None,
) -> Connection:
    """A connection added by ``owner`` from ``fields`` (FIELDS; a file kind's database in
    ``file``), their own or ``workspace``'s (see check_workspace). Raises BadConnection
    (NameTaken for a name taken among their own, or the workspace's)."""
    unknown = sorted(set(fields) - set(FIELDS))
    if unknown:
        raise BadConnection(f"a connection has no field {unknown[0]!r} (it has: {', '.join(FIELDS)})")
    kind = kinds.check_kind(fields.get("kind"))
    name = kinds.check_name(fields.get("name"))
    connection = Connection(owner=owner, workspace=workspace, name=name, kind=kind)
    _set(connection, {"url": "", "options": {}, "secret": "", "read_only": True, **fields})
    if kinds.is_file_kind(kind):
        if file is None:
            raise BadConnection(f"a {kind} connection needs its database: send it as file (multipart)")
        _put_file(connection, file)
    elif file is not None:
        raise BadConnection(f"a {kind} connection takes no file")
    _save(connection)
    audit_records.record_for_connection("connection_create", connection, user=owner, detail={"kind": kind})
    return connection


def do_update(*, connection: Connection, fields: dict[str, Any]) -> Connection:
    """Change any of FIELDS ("secret": "" keeps the secret, another value replaces it). What the
    last Test found is forgotten when the connection leads elsewhere. Raises BadConnection."""
    unknown = sorted(set(fields) - set(FIELDS))
    if unknown:
        raise BadConnection(f"a connection has no field {unknown[0]!r} (it has: {', '.join(FIELDS)})")
    if fields.get("secret") == "":
        fields = {k: v for k, v in fields.items() if k != "secret"}
    if "name" in fields:
        connection.name = kinds.check_name(fields["name"])
    if "kind" in fields:
        kind = kinds.check_kind(fields["kind"])
        if kind != connection.kind and (kinds.is_file_kind(kind) or kinds.is_file_kind(connection.kind)):
            raise BadConnection("a file connection's kind stays as it is: make a new connection")
        connection.kind = kind
    _set(connection, {"url": connection.url, "options": connection.options, **fields})
    if any(field in fields for field in RETARGETING):
        connection.checked, connection.schema = {}, {}
    _save(connection)
    return connection


def do_delete(*, connection: Connection) -> None:
    stored = connection.file.name
    connection.delete()
    if stored:
        transaction.on_commit(lambda: connection.file.storage.delete(stored))


def _set(connection: Connection, fields: dict[str, Any]) -> None:
    url, options = kinds.check(connection.kind, fields["url"], fields["options"])
    if len(url) > MAX_URL:
        raise BadConnection(f"the URL is longer than {MAX_URL} characters")
    connection.url, connection.options = url, options
    if "read_only" in fields:
        if not isinstance(fields["read_only"], bool):
            raise BadConnection("read_only must be true or false")
        connection.read_only = fields["read_only"]
    if "secret" in fields:
        secret = fields["secret"]
        if not isinstance(secret, str) or len(secret) > MAX_SECRET:
            raise BadConnection(f"secret must be a string of at most {MAX_SECRET:,} characters")
        connection.secret_sealed = sealing.seal(secret) if secret else ""


def _put_file(connection: Connection, file: IO[bytes]) -> None:
    head = file.read(16)
    file.seek(0)
    kinds.check_file(connection.kind, head)
    stem = os.path.basename(getattr(file, "name", "") or f"{connection.name}") or connection.name
    connection.file.save(stem, File(file), save=False)


def _save(connection: Connection) -> None:
    try:
        with transaction.atomic():
            connection.save()
    except IntegrityError:
        workspace = connection.workspace
        whose = "you already have" if workspace is None else f"{workspace.name} already has"
        raise NameTaken(f"{whose} a connection named {connection.name!r}") from None


def secret_of(connection: Connection) -> str:
    """The connection's secret in the clear ("" when it has none): for the sandbox alone."""
    return sealing.unseal(connection.secret_sealed) if connection.secret_sealed else ""


def as_dict(connection: Connection) -> dict[str, Any]:
    """The connection as the API shows it: never its secret, only whether it has one."""
    attached = getattr(connection, "attached", None)
    return {
        "id": connection.id,
        "name": connection.name,
        "kind": connection.kind,
        "url": connection.url,
        "read_only": connection.read_only,
        "options": connection.options,
        "has_secret": bool(connection.secret_sealed),
        "file": _file_entry(connection),
        "schema": connection.schema,
        "checked": connection.checked,
        "dictionary": connection.dictionary,  # what its tables hold, in the user's words
        "workspace": _workspace_entry(connection),
        "sessions": connection.attachments.count() if attached is None else attached,
        "created_at": connection.created_at.isoformat(),
        "updated_at": connection.updated_at.isoformat(),
    }


def _workspace_entry(connection: Connection) -> dict[str, Any] | None:
    """Where the connection lives: its workspace, or (its owner's own) their personal one."""
    if connection.workspace is not None:
        workspace = connection.workspace
    else:
        workspace = getattr(connection.owner, "personal_workspace", None)
    return None if workspace is None else {"id": workspace.id, "name": workspace.name}


def _file_entry(connection: Connection) -> dict[str, Any] | None:
    if not connection.file:
        return None
    try:
        size = connection.file.size
    except OSError:
        size = None
    return {"name": os.path.basename(connection.file.name), "size": size}
