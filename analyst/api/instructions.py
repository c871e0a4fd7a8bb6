"""Standing instructions the model is given: the user's own (every session they ask in) and a
workspace's (every session in it; read by its members, set by its admins): read, replace."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_http_methods

from analyst.api.auth import ApiError, api_view, json_body
from analyst.api.workspaces import refusals
from analyst.trust import instructions as saved_instructions
from analyst.workspaces import members, roles
from analyst.workspaces.roles import Action


def _text(request: HttpRequest) -> object:
    body = json_body(request)
    if "text" not in body:
        raise ApiError(400, "invalid_request", 'send the instructions as {"text": "…"}')
    return body["text"]


@api_view
@require_http_methods(["GET", "PUT"])
def instructions(request: HttpRequest) -> JsonResponse:
    if request.method == "GET":
        return JsonResponse(saved_instructions.as_dict(saved_instructions.saved(request.user)))
    try:
        saved = saved_instructions.do_save(user=request.user, text=_text(request))
    except saved_instructions.BadInstructions as exc:
        raise ApiError(400, "invalid_instructions", str(exc)) from None
    return JsonResponse(saved_instructions.as_dict(saved))


@api_view
@require_http_methods(["GET", "PUT"])
def workspace_instructions(request: HttpRequest, workspace_id: int) -> JsonResponse:
    with refusals():
        workspace, role = members.get_visible(request.user, workspace_id)
        if request.method == "PUT":
            members.check_may(request.user, workspace, Action.MANAGE_SETTINGS)  # before reading the body
            try:
                saved_instructions.do_save_for_workspace(
                    workspace=workspace, by=request.user, text=_text(request)
                )
            except saved_instructions.BadInstructions as exc:
                raise ApiError(400, "invalid_instructions", str(exc)) from None
    editable = roles.may(role, Action.MANAGE_SETTINGS)
    return JsonResponse(saved_instructions.workspace_dict(workspace, editable=editable))
