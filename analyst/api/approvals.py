"""A model's cell waiting for its owner: run it (perhaps edited) or reject it."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_POST

from analyst.api.auth import ApiError, api_view, json_body
from analyst.realtime import events
from analyst.sessions import sessions
from analyst.trust import approvals
from analyst.workspaces.roles import Action


@api_view
@require_POST
def approve(request: HttpRequest, session_id: str, tool_call_id: str) -> JsonResponse:
    """Run the waiting cell; with ``{"code": ...}`` the edited code runs instead."""
    return _decide(request, session_id, tool_call_id, approve=True)


@api_view
@require_POST
def reject(request: HttpRequest, session_id: str, tool_call_id: str) -> JsonResponse:
    """Do not run it; the model reads the rejection (and ``{"reason": ...}``) as the cell's result."""
    return _decide(request, session_id, tool_call_id, approve=False)


def _decide(request: HttpRequest, session_id: str, tool_call_id: str, *, approve: bool) -> JsonResponse:
    session = sessions.get_for(request.user, session_id, Action.RUN_CELL)
    try:
        decision = approvals.check_decision(json_body(request), approve=approve)
        decided = approvals.do_decide(session=session, tool_call_id=tool_call_id, decision=decision)
    except ValueError as exc:
        raise ApiError(400, "invalid_request", str(exc)) from None
    except approvals.NotPending as exc:
        raise ApiError(404, "not_pending", str(exc)) from None
    except approvals.AlreadyDecided as exc:
        raise ApiError(409, "already_decided", str(exc)) from None
    return JsonResponse(events.as_dict(decided))
