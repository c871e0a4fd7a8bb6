"""Session endpoints: sessions, questions, cells, the kernel's controls, replays, forks and branches."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_http_methods, require_POST

from analyst.accounts import limits as user_limits
from analyst.accounts import usage
from analyst.api.access import session_for
from analyst.api.auth import ApiError, api_view, error_response, json_body
from analyst.api.workspaces import refusals as workspace_refusals
from analyst.models import AnalysisSession, Turn
from analyst.sessions import branches, forks, regenerations, replays, sessions
from analyst.trust import approvals, privacy
from analyst.turns import turns
from analyst.turns.agent.providers import availability
from analyst.turns.agent.providers.router import missing_key
from analyst.uploads import uploads
from analyst.workspaces import members
from analyst.workspaces.roles import Action


@api_view
@require_http_methods(["GET", "POST"])
def sessions_collection(request: HttpRequest) -> JsonResponse:
    if request.method == "GET":
        if "workspace" in request.GET:
            with workspace_refusals():
                workspace, _ = members.get_visible(request.user, request.GET["workspace"])
            listed = sessions.in_workspace(workspace)
        else:
            listed = sessions.listed(request.user)
        return JsonResponse({"sessions": [sessions.as_dict(s) for s in listed]})
    body = json_body(request)
    for field in ("model", "title"):
        if body.get(field) is not None and not isinstance(body[field], str):
            raise ApiError(400, "invalid_request", f"{field!r} must be a string")
    workspace = None
    if body.get("workspace") is not None:
        with workspace_refusals():
            workspace, _ = members.get_visible(request.user, body["workspace"])
            members.check_may(request.user, workspace, Action.CREATE_SESSION)
    try:
        session = sessions.do_create(
            owner=request.user, model=body.get("model"), title=body.get("title"), workspace=workspace
        )
    except sessions.InvalidModel as exc:
        raise ApiError(400, "invalid_model", str(exc)) from None
    return JsonResponse(sessions.as_dict(session), status=201)


@api_view
@require_http_methods(["GET", "PATCH", "DELETE"])
def session_detail(request: HttpRequest, session_id: str) -> JsonResponse:
    change = Action.DELETE_SESSION if request.method == "DELETE" else Action.SESSION_SETTINGS
    session = session_for(request, session_id, change)
    if request.method == "DELETE":
        sessions.do_delete(session)
        return JsonResponse({"deleted": str(session_id)})
    if request.method == "PATCH":
        body = json_body(request)
        try:
            privacy_settings = privacy.checked_settings(body, session)  # checked first too
            if "approve_cells" in body:  # checked first: a bad value changes nothing
                approvals.do_set_mode(session, body["approve_cells"])
            sessions.do_update(session, title=body.get("title"), model=body.get("model"))
            privacy.do_set(session, privacy_settings)
        except sessions.InvalidModel as exc:
            raise ApiError(400, "invalid_model", str(exc)) from None
        except privacy.SetByWorkspace as exc:
            raise ApiError(409, "set_by_workspace", str(exc)) from None
        except ValueError as exc:
            raise ApiError(400, "invalid_request", str(exc)) from None
    # Whether its model can answer here, and if not why: the page turns Send off and says so.
    return JsonResponse(
        {
            **sessions.as_dict(session),
            "approve_cells": session.approve_cells,
            **privacy.as_dict(session),
            "model_key_missing": missing_key(session.model) is not None,
            "model_unavailable": availability.check(session.model).reason or None,
            "usage": usage.session_usage(session),
            "branched_from": _branched_from(session),
            "branches": branches.branches_of(session),
            "budget": usage.budget_dict(request.user),
        }
    )


@api_view
@require_POST
def messages(request: HttpRequest, session_id: str) -> JsonResponse:
    return _start(request, session_id, Turn.Kind.CHAT, "content")


@api_view
@require_POST
def cells(request: HttpRequest, session_id: str) -> JsonResponse:
    return _start(request, session_id, Turn.Kind.CELL, "code")


def _start(request: HttpRequest, session_id: str, kind: str, field: str) -> JsonResponse:
    session = sessions.get_for(
        request.user, session_id, Action.RUN_CELL if kind == Turn.Kind.CELL else Action.ASK
    )
    body = json_body(request)
    text = body.get(field)
    if not isinstance(text, str) or not text.strip():
        raise ApiError(400, "invalid_request", f"{field!r} must be a non-empty string")
    edited_from = None
    if kind == Turn.Kind.CELL and body.get("edited_from") is not None:
        try:
            edited_from = turns.check_edit_source(session, body["edited_from"])
        except ValueError as exc:
            raise ApiError(400, "invalid_request", str(exc)) from None
    return _started(request, session, kind, text, edited_from=edited_from)


@api_view
@require_POST
def restart_kernel(request: HttpRequest, session_id: str) -> JsonResponse:
    """A fresh kernel, as a turn of its own (none runs beside it): a turn running meanwhile is
    stopped first, its cell ended within the interrupt grace."""
    session = sessions.get_for(request.user, session_id, Action.RESTART)
    with refusals():
        turn = turns.do_restart(session=session, user=request.user)
    return _accepted(turn)


@api_view
@require_POST
def run_all(request: HttpRequest, session_id: str) -> JsonResponse:
    """Restart and run all: the kernel restarted, then the session's current cells in order."""
    session = sessions.get_for(request.user, session_id, Action.RUN_CELL)
    with refusals():
        turn = replays.do_run_all(session=session, user=request.user)
    return _accepted(turn)


@api_view
@require_POST
def rerun(request: HttpRequest, session_id: str) -> JsonResponse:
    """The session's current cells in a new session, on ``with`` (an upload) in place of
    ``replace`` (one of this session's): 201 with the new session and its turn."""
    session = sessions.get_for(request.user, session_id, Action.RUN_CELL)
    body = json_body(request)
    with refusals(), replay_refusals():
        rerun = replays.check_rerun(
            session=session, user=request.user, replace=body.get("replace"), using=body.get("with")
        )
        target, turn = replays.do_rerun(rerun=rerun, user=request.user)
    answer = {**sessions.as_dict(target), "url": f"/sessions/{target.id}/", "turn": turn.id}
    return JsonResponse({**answer, "extra_columns": rerun.extra}, status=201)


@api_view
@require_POST
def interrupt_kernel(request: HttpRequest, session_id: str) -> JsonResponse:
    """Interrupt the running cell, keeping its turn (``cancel`` ends the turn)."""
    interrupted = turns.do_interrupt(session=sessions.get_for(request.user, session_id, Action.RESTART))
    return JsonResponse({"interrupted": interrupted})


@api_view
@require_POST
def regenerate(request: HttpRequest, session_id: str, turn_id: int) -> JsonResponse:
    """The session's last question asked again; its earlier answer stays in the log, superseded."""
    session = sessions.get_for(request.user, session_id, Action.ASK)
    turn = regenerations.get_turn(session, turn_id)
    with refusals():
        try:
            started = regenerations.do_regenerate(session=session, turn=turn, user=request.user)
        except regenerations.NotTheLastAnswer as exc:
            raise ApiError(409, "not_the_last_answer", str(exc)) from None
    return _accepted(started)


@api_view
@require_POST
def branch(request: HttpRequest, session_id: str, turn_id: int) -> JsonResponse:
    """A past question edited: a new session from just before it, where the edited one is asked."""
    session = sessions.get_for(request.user, session_id, Action.ASK)
    turn = regenerations.get_turn(session, turn_id)
    body = json_body(request)
    text = body.get("content")
    if not isinstance(text, str) or not text.strip():
        raise ApiError(400, "invalid_request", "'content' must be a non-empty string")
    empty_kernel = body.get("empty_kernel", False)
    if not isinstance(empty_kernel, bool):
        raise ApiError(400, "invalid_request", "'empty_kernel' must be true or false")
    with refusals():
        try:
            question = branches.check_branch_point(session, turn)
        except ValueError as exc:
            raise ApiError(400, "invalid_request", str(exc)) from None
        try:
            made, asked = branches.do_branch(
                source=session,
                turn=turn,
                question=question,
                owner=request.user,
                text=text,
                empty_kernel=empty_kernel,
            )
        except branches.StateLost as exc:
            raise ApiError(409, "kernel_state_lost", str(exc)) from None
    return JsonResponse({**sessions.as_dict(made), "turn": asked.id, "status": asked.status}, status=201)


@contextlib.contextmanager
def refusals() -> Iterator[None]:
    """Why a turn cannot start, as the API says it."""
    try:
        yield
    except replays.NothingToRun as exc:
        raise ApiError(400, "nothing_to_run", str(exc)) from None
    except turns.TurnRefused as exc:
        raise ApiError(409, "turn_running", str(exc)) from None
    except turns.InputTooLong as exc:
        raise ApiError(413, "input_too_long", str(exc)) from None
    except usage.TokenBudgetExhausted as exc:
        raise ApiError(429, "token_budget_exhausted", str(exc)) from None
    except user_limits.LimitReached as exc:
        raise ApiError(429, exc.code, str(exc)) from None


@contextlib.contextmanager
def replay_refusals() -> Iterator[None]:
    """Why the session's cells cannot run on the files asked for, as the API says it."""
    try:
        yield
    except turns.InputTooLong:
        raise  # a ValueError too, said by refusals()
    except uploads.StillReading as exc:
        raise ApiError(409, "still_reading", str(exc)) from None
    except replays.NotComparable as exc:
        raise ApiError(422, "not_comparable", str(exc)) from None
    except replays.ColumnsMissing as exc:
        raise ApiError(422, "columns_missing", str(exc), missing=exc.missing, extra=exc.extra) from None
    except ValueError as exc:
        raise ApiError(400, "invalid_request", str(exc)) from None


def _started(
    request: HttpRequest, session: AnalysisSession, kind: str, text: str, *, edited_from: int | None = None
) -> JsonResponse:
    with refusals():
        turn = turns.do_start_turn(
            session=session, user=request.user, kind=kind, text=text, edited_from=edited_from
        )
    return _accepted(turn)


def _accepted(turn: Turn) -> JsonResponse:
    if turn.enqueued is False:
        # Stored, not lost: the reconciler sends it once the broker answers again.
        message = (
            "The task queue is unreachable just now. Your request is saved and will run as soon as"
            " the queue is back; there is no need to send it again."
        )
        return error_response(503, "queue_unavailable", message, turn=turn.id, status=turn.status)
    return JsonResponse({"turn": turn.id, "status": turn.status}, status=202)


@api_view
@require_POST
def cancel(request: HttpRequest, session_id: str) -> JsonResponse:
    turn = turns.do_cancel(session=sessions.get_for(request.user, session_id, Action.RESTART))
    return JsonResponse({"turn": turn.id if turn else None})


@api_view
@require_POST
def fork(request: HttpRequest, session_id: str) -> JsonResponse:
    """A copy of the session in the requester's account, kernel state included when saved."""
    forked = forks.do_fork(source=sessions.get_for(request.user, session_id, Action.FORK), owner=request.user)
    return JsonResponse(sessions.as_dict(forked), status=201)


def _branched_from(session: AnalysisSession) -> dict[str, object] | None:
    if session.branched_from_id is None:
        return None
    return {"id": str(session.branched_from_id), "at": session.branched_at}
