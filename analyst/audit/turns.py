"""A turn's start in the audit log: a question asked, a cell run (its code's sha256, never the
code), and, in a session with connections, their use (once per turn, naming them)."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser

from analyst.audit.records import code_digest, record, session_target, workspace_of_session
from analyst.models import AnalysisSession, Connection, Turn


def record_start(*, session: AnalysisSession, user: AbstractBaseUser, turn: Turn) -> None:
    workspace = workspace_of_session(session)
    target = session_target(session)
    if turn.kind == Turn.Kind.CHAT:
        record("ask", user=user, workspace=workspace, target=target, detail={"turn": turn.id})
    elif turn.kind == Turn.Kind.CELL:
        detail = {"turn": turn.id, "sha256": code_digest(turn.input)}
        record("cell_run", user=user, workspace=workspace, target=target, detail=detail)
    if turn.kind == Turn.Kind.RESTART:
        return
    used = Connection.objects.filter(attachments__session=session).order_by("name")
    names = [{"id": c.id, "name": c.name} for c in used.only("id", "name")]
    if names:
        detail = {"turn": turn.id, "connections": names}
        record("connection_use", user=user, workspace=workspace, target=target, detail=detail)
