"""Run endpoints: an analysis's parameters, runs of it with other values, and their schedules."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET, require_http_methods

from analyst.api.access import session_for
from analyst.api.auth import ApiError, api_view, json_body
from analyst.api.sessions import refusals, replay_refusals
from analyst.runs import parameters, runs, schedules
from analyst.sessions import replays
from analyst.sessions.exports.transcript import analysis_cells
from analyst.workspaces.roles import Action


@api_view
@require_http_methods(["GET", "PUT"])
def session_parameters(request: HttpRequest, session_id: str) -> JsonResponse:
    """The analysis's parameters, its parameters cell and the cells that could be it; PUT
    ``{"code": <a cell's code>}`` marks that cell as its parameters cell (``""`` unmarks it)."""
    session = session_for(request, session_id, Action.SCHEDULE)
    try:
        if request.method == "PUT":
            parameters.do_mark(session, json_body(request).get("code"))
        cells = analysis_cells(session)
        declared = parameters.declared(session, cells)
    except parameters.NotAParametersCell as exc:
        raise ApiError(422, "not_a_parameters_cell", str(exc)) from None
    except ValueError as exc:
        raise ApiError(400, "invalid_request", str(exc)) from None
    marked = session.parameters_cell or None
    answer = {"parameters": [p.as_dict() for p in declared], "parameters_cell": marked}
    return JsonResponse({**answer, "candidates": parameters.candidates(cells)})


@api_view
@require_http_methods(["GET", "POST"])
def session_runs(request: HttpRequest, session_id: str) -> JsonResponse:
    """The session's runs, newest first; POST ``{"parameters": {...}, "files": {path: upload id},
    "repair": false}`` starts one: 202 with the run."""
    session = session_for(request, session_id, Action.SCHEDULE)
    if request.method == "GET":
        return JsonResponse({"runs": [runs.as_dict(run) for run in runs.of_session(session)]})
    body = json_body(request)
    repair = body.get("repair", False)
    if not isinstance(repair, bool):
        raise ApiError(400, "invalid_request", "'repair' must be true or false")
    with refusals(), replay_refusals():
        try:
            run = runs.do_start(
                source=session,
                user=request.user,
                values=body.get("parameters"),
                files=body.get("files"),
                repair=repair,
            )
        except parameters.NotAParametersCell as exc:
            raise ApiError(422, "not_a_parameters_cell", str(exc)) from None
    return JsonResponse(runs.as_dict(run), status=202)


@api_view
@require_GET
def run_detail(request: HttpRequest, run_id: str) -> JsonResponse:
    """A run: its status, each cell's outcome, and its session's events."""
    return JsonResponse(runs.as_dict(runs.get_for(request.user, run_id), details=True))


@api_view
@require_http_methods(["GET", "POST"])
def session_schedules(request: HttpRequest, session_id: str) -> JsonResponse:
    """The session's schedules; POST ``{"cron", "timezone", "parameters", "retries",
    "notify_emails", "webhook_url", "paused"}`` makes one: 201 with it and its webhook's secret."""
    session = session_for(request, session_id, Action.SCHEDULE)
    if request.method == "GET":
        return JsonResponse({"schedules": [schedules.as_dict(s) for s in session.schedules.all()]})
    with schedule_refusals():
        made = schedules.do_create(session=session, user=request.user, fields=json_body(request))
    return JsonResponse({**schedules.as_dict(made), "webhook_secret": made.webhook_secret}, status=201)


@api_view
@require_http_methods(["GET", "PATCH", "DELETE"])
def schedule_detail(request: HttpRequest, schedule_id: int) -> JsonResponse:
    schedule = schedules.get_owned(request.user, schedule_id)
    if request.method == "DELETE":
        schedules.do_delete(schedule)
        return JsonResponse({"deleted": schedule_id})
    if request.method == "PATCH":
        with schedule_refusals():
            schedules.do_update(schedule, json_body(request))
    return JsonResponse(schedules.as_dict(schedule))


@contextlib.contextmanager
def schedule_refusals() -> Iterator[None]:
    try:
        yield
    except replays.NothingToRun as exc:
        raise ApiError(400, "nothing_to_run", str(exc)) from None
    except ValueError as exc:  # ScheduleError among them
        raise ApiError(400, "invalid_request", str(exc)) from None
