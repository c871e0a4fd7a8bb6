"""Which connections a session's kernel may use: its owner's own, or its workspace's, attached and
detached; kept by a session made from another where it may use them (the owner's own by the same
owner's copies, a workspace's by copies in that workspace), never by someone else's fork; and
the secrets they bring."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.http import Http404

from analyst.audit import records as audit_records
from analyst.connections import kinds, sealing
from analyst.connections.kinds import BadConnection
from analyst.connections.registry import secret_of
from analyst.models import AnalysisSession, Connection, SessionConnection, SessionSecret

MAX_ATTACHED = 32  # sandboxd's limit of endpoints per sandbox


def attached(session: AnalysisSession) -> list[Connection]:
    """The session's connections, in the order they were attached."""
    return list(
        Connection.objects.filter(attachments__session=session).order_by("attachments__attached_at", "id")
    )


def may_use(session: AnalysisSession, connection: Connection) -> bool:
    """A workspace's connection serves the sessions of that workspace; a user's own, theirs."""
    if connection.workspace_id is not None:
        return connection.workspace_id == session.workspace_id
    return connection.owner_id == session.owner_id


def do_attach(*, session: AnalysisSession, connection: Connection) -> bool:
    """Attach a connection the session may use; whether it was not attached already. Raises
    BadConnection past MAX_ATTACHED, or when another attached connection has its name."""
    if not may_use(session, connection):
        raise Http404("no such connection")
    with transaction.atomic():
        if session.attachments.filter(connection=connection).exists():
            return False
        if session.attachments.filter(connection__name=connection.name).exists():
            raise BadConnection(f"this session uses another connection named {connection.name!r} already")
        if session.attachments.count() >= MAX_ATTACHED:
            raise BadConnection(f"a session may use at most {MAX_ATTACHED} connections")
        try:
            with transaction.atomic():
                SessionConnection.objects.create(session=session, connection=connection)
        except IntegrityError:  # attached meanwhile, by another request
            return False
        _record("connection_attach", session, connection)
    return True


def do_detach(*, session: AnalysisSession, connection_id: object) -> Connection:
    """Raises Http404 when that connection is not attached to the session."""
    found = session.attachments.filter(connection_id=connection_id).select_related("connection").first()
    if found is None:
        raise Http404("no such connection is attached to this session")
    found.delete()
    _record("connection_detach", session, found.connection)
    return found.connection


def _record(action: str, session: AnalysisSession, connection: Connection) -> None:
    detail = {"connection": connection.id, "name": connection.name}
    audit_records.record_for_session(action, session, detail=detail)


def copy_attachments(source: AnalysisSession, target: AnalysisSession) -> None:
    """``target``, made from ``source``, uses the same connections where it may (may_use), and its
    secret variables when one person owns both; someone else's fork gets none of them."""
    kept = [a.connection for a in source.attachments.select_related("connection")]
    SessionConnection.objects.bulk_create(
        [SessionConnection(session=target, connection=c) for c in kept if may_use(target, c)],
        ignore_conflicts=True,
    )
    if source.owner_id != target.owner_id:
        return
    kept = [(x.name, x.value_sealed) for x in source.secrets.all()]  # and its secret variables, sealed
    SessionSecret.objects.bulk_create(
        [SessionSecret(session=target, name=name, value_sealed=sealed) for name, sealed in kept],
        ignore_conflicts=True,
    )


def uses_secrets(session: AnalysisSession) -> bool:
    """Whether the session has connections attached or secret variables."""
    return session.attachments.exists() or session.secrets.exists()


def secrets_of(session: AnalysisSession) -> dict[str, str]:
    """{connection name: its secret in the clear} for the session's attached connections that have
    one: what every output of the session is kept from showing."""
    return {c.name: secret_of(c) for c in attached(session) if c.secret_sealed}


def session_env(session: AnalysisSession) -> dict[str, str]:
    """The session's secret environment variables, in the clear: for the sandbox alone."""
    return {s.name: sealing.unseal(s.value_sealed) for s in session.secrets.all()}


def file_paths(connections: list[Connection]) -> dict[str, str]:
    """{name: where its database goes in the workdir} for the file connections among them."""
    return {c.name: kinds.file_path(c.name, c.kind) for c in connections if kinds.is_file_kind(c.kind)}
