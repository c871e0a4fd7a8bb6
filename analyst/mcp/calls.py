"""What each MCP tool does, as the caller's user, through the paths the page and the JSON API use:
the same ownership checks, upload checks, turn rules and per-user limits. Plain, synchronous
functions (the server runs them off its event loop); a refusal is ``Refused`` with a message for
the client."""

from __future__ import annotations

import base64
import binascii
import uuid
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.core.files.uploadedfile import SimpleUploadedFile
from django.http import Http404

from analyst.accounts import limits as user_limits
from analyst.accounts import usage
from analyst.connections import registry
from analyst.connections.kinds import BadConnection
from analyst.files import reports as file_reports
from analyst.files.artifacts import StorageFull
from analyst.kernels import session_connections, session_files
from analyst.lib.sizes import human_size
from analyst.models import AnalysisSession, Artifact, DataFile, Event, Run, Turn
from analyst.runs import runs
from analyst.sessions import replays, sessions
from analyst.turns import turns
from analyst.uploads import uploads
from analyst.workspaces.roles import Action

# Why a turn may not start now, each said to the MCP client as the page says it.
TURN_REFUSED = (turns.TurnRefused, turns.InputTooLong, usage.TokenBudgetExhausted, user_limits.LimitReached)


# Why a run may not start, said as the API says it.
RUN_REFUSED = (
    ValueError,
    Http404,
    replays.NothingToRun,
    replays.NotComparable,
    replays.ColumnsMissing,
    uploads.StillReading,
)


class Refused(Exception):
    """The call cannot be done; the message says why, for the client."""


@dataclass(frozen=True)
class Who:
    """The caller: the token's user, the base URL its session links use, its MCP client's name."""

    user: AbstractBaseUser
    base_url: str
    client: str


def reachable(user: AbstractBaseUser, session_id: str, action: Action = Action.READ) -> AnalysisSession:
    """The session, when the caller may do ``action`` in it; Refused, saying why, when not."""
    try:
        return sessions.get_for(user, uuid.UUID(session_id), action)
    except (Http404, ValueError):
        raise Refused(f"no session {session_id!r} (it does not exist, or it is not yours)") from None
    except PermissionDenied as exc:
        raise Refused(str(exc)) from None


def access_lost(user: AbstractBaseUser, session_id: object) -> str | None:
    """Why the user may no longer read the session (their membership of its workspace ended),
    or None while they may."""
    if sessions.may_read(user, session_id):
        return None
    return "you may no longer read this session: you are not a member of its workspace any more"


def session_entry(session: AnalysisSession, base_url: str) -> dict[str, Any]:
    return {
        "session_id": str(session.id),
        "title": session.title,
        "model": session.model,
        "url": f"{base_url}/sessions/{session.id}/",
        "created_at": session.created_at.isoformat(),
        "updated_at": session.updated_at.isoformat(),
    }


def create_session(who: Who, title: str | None, connections: list[str] | None = None) -> dict[str, Any]:
    """A new session of the caller's (in their own workspace), using their own ``connections`` (by
    name, as registry.get_named finds them; none made when one may not be used there)."""
    try:
        chosen = [registry.get_named(who.user, name) for name in dict.fromkeys(connections or [])]
    except Http404 as exc:
        raise Refused(str(exc)) from None
    session = sessions.do_create(owner=who.user, model=None, title=title)
    for connection in chosen:
        try:
            session_connections.attach(session, connection)
        except BadConnection as exc:
            raise Refused(str(exc)) from None
    return session_entry(session, who.base_url)


def list_sessions(who: Who) -> list[dict[str, Any]]:
    owned_sessions = sessions.listed(who.user).order_by("-updated_at")
    return [session_entry(s, who.base_url) for s in owned_sessions]


def start_turn(who: Who, session_id: str, kind: str, text: str) -> tuple[Turn, int, str]:
    """A turn started as the page starts one: (the turn, the seq its events come after, the
    session's url)."""
    session = reachable(who.user, session_id, Action.RUN_CELL if kind == Turn.Kind.CELL else Action.ASK)
    via = {"via": "mcp", "client": who.client}
    try:
        turn = turns.do_start_turn(session=session, user=who.user, kind=kind, text=text, via=via)
    except TURN_REFUSED as exc:
        raise Refused(str(exc)) from None
    first = Event.objects.filter(turn=turn).order_by("seq").values_list("seq", flat=True).first()
    return turn, (first or 1) - 1, session_entry(session, who.base_url)["url"]


def start_run(who: Who, session_id: str, values: dict[str, Any]) -> tuple[Run, str]:
    """A run of the session's analysis with ``values``, as POST /api/sessions/<id>/runs starts
    one: (the run, its session's url)."""
    session = reachable(who.user, session_id, Action.SCHEDULE)
    try:
        run = runs.do_start(source=session, user=who.user, values=values)
    except (*TURN_REFUSED, *RUN_REFUSED) as exc:
        raise Refused(str(exc)) from None
    return run, f"{who.base_url}/sessions/{run.session_id}/"


def run_summary(run_id: object) -> dict[str, Any]:
    run = Run.objects.select_related("turn").get(id=run_id)
    return runs.as_dict(run) | {"cells": runs.cell_outcomes(run)}


def cancel_turn(turn_id: int) -> None:
    """The client gave up on the call: stop its turn, as Stop on the page does."""
    turn = Turn.objects.select_related("session").get(id=turn_id)
    if turn.status not in Turn.FINISHED:
        turns.do_cancel(session=turn.session)


def upload(who: Who, session_id: str, name: str, content_base64: str) -> int:
    """Store the file and send it to the sandbox, as a browser upload does: its DataFile's id."""
    session = reachable(who.user, session_id, Action.UPLOAD)
    limit = min(settings.ANALYST_MCP_MAX_UPLOAD, settings.ANALYST_MAX_UPLOAD)
    if len(content_base64) > (limit + 2) // 3 * 4 + 4:
        raise Refused(
            f"the file is over {human_size(limit)}, the most an MCP upload takes; upload it"
            " on the session's page or with POST /api/sessions/<id>/files instead"
        )
    try:
        content = base64.b64decode(content_base64, validate=True)
    except (binascii.Error, ValueError):
        raise Refused("content_base64 is not valid base64") from None
    try:
        data_file = uploads.do_upload(session=session, upload=SimpleUploadedFile(name, content))
    except (uploads.UploadRefused, user_limits.LimitReached) as exc:
        raise Refused(str(exc)) from None
    except StorageFull as exc:
        raise Refused(str(exc)) from None
    return data_file.id


def placed_file(file_id: int) -> dict[str, Any] | None:
    """The upload as the files panel shows it once it is in the sandbox (or failed); None while
    it is still on its way."""
    data_file = DataFile.objects.filter(id=file_id).first()
    if data_file is None:
        raise Refused("the file was deleted while it was being read")
    if data_file.placement == DataFile.Placement.PLACING:
        return None
    return file_reports.upload_entry(data_file)


def list_files(who: Who, session_id: str) -> list[dict[str, Any]]:
    return session_files.listing(reachable(who.user, session_id))


def download(who: Who, session_id: str, path: str) -> session_files.Download:
    session = reachable(who.user, session_id)
    try:
        return session_files.download(session, path)
    except Http404:
        raise Refused(f"no file {path!r} in this session") from None


def artifact_bytes(session_id: str, artifact_id: str) -> bytes | None:
    artifact = Artifact.objects.filter(id=artifact_id, session_id=session_id).first()
    if artifact is None:
        return None
    with artifact.file.open("rb") as stream:
        return stream.read()
