"""A user's connections: made, changed and deleted (their fields checked by kinds, their secret
sealed), found by id or name among the owner's own, and described for the API (never the secret)."""

from __future__ import annotations

import os
from typing import IO, Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.files import File
from django.db import IntegrityError, transaction
from django.db.models import Count
from django.http import Http404

from analyst.audit import records as audit_records
from analyst.connections import kinds, sealing
from analyst.connections.kinds import BadConnection
from analyst.models import Connection

FIELDS = ("name", "kind", "url", "secret", "read_only", "options")
MAX_SECRET = 10_000
MAX_URL = 2000
# What changes where a connection leads, so what its last Test found no longer holds.
RETARGETING = ("kind", "url", "options", "secret")


class NameTaken(BadConnection):
    pass


def get_owned(owner: AbstractBaseUser, connection_id: object) -> Connection:
    """The owner's connection; Http404 for anyone else's (no hint that it exists)."""
    try:
        return Connection.objects.get(id=connection_id, owner=owner)
    except (Connection.DoesNotExist, ValueError, TypeError):
        raise Http404("no such connection") from None


def get_named(owner: AbstractBaseUser, name: object) -> Connection:
    """The owner's connection called ``name``; Http404 naming theirs when there is none."""
    found = Connection.objects.filter(owner=owner, name=name).first() if isinstance(name, str) else None
    if found is None:
        theirs = ", ".join(Connection.objects.filter(owner=owner).values_list("name", flat=True)) or "none"
        raise Http404(f"you have no connection named {name!r} (yours: {theirs})")
    return found


def listed(owner: AbstractBaseUser) -> list[Connection]:
    found = Connection.objects.filter(owner=owner).annotate(attached=Count("attachments"))
    return list(found.order_by("name"))


def do_create(
    *, owner: AbstractBaseUser, fields: dict[str, Any], file: IO[bytes] | None = None
) -> Connection:
    """A connection of ``owner`` from ``fields`` (FIELDS; a file kind's database in ``file``).
    Raises BadConnection (NameTaken for a name the owner has already)."""
    unknown = sorted(set(fields) - set(FIELDS))
    if unknown:
        raise BadConnection(f"a connection has no field {unknown[0]!r} (it has: {', '.join(FIELDS)})")
    kind = kinds.check_kind(fields.get("kind"))
    connection = Connection(owner=owner, name=kinds.check_name(fields.get("name")), kind=kind)
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
        raise NameTaken(f"you already have a connection named {connection.name!r}") from None


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
        "sessions": connection.attachments.count() if attached is None else attached,
        "created_at": connection.created_at.isoformat(),
        "updated_at": connection.updated_at.isoformat(),
    }


def _file_entry(connection: Connection) -> dict[str, Any] | None:
    if not connection.file:
        return None
    try:
        size = connection.file.size
    except OSError:
        size = None
    return {"name": os.path.basename(connection.file.name), "size": size}
