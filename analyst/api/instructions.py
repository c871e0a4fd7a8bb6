"""The user's saved instructions, which every session of theirs gives the model: read, replace."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_http_methods

from analyst.api.auth import ApiError, api_view, json_body
from analyst.trust import instructions as saved_instructions


@api_view
@require_http_methods(["GET", "PUT"])
def instructions(request: HttpRequest) -> JsonResponse:
    if request.method == "GET":
        return JsonResponse(saved_instructions.as_dict(saved_instructions.saved(request.user)))
    body = json_body(request)
    if "text" not in body:
        raise ApiError(400, "invalid_request", 'send the instructions as {"text": "…"}')
    try:
        saved = saved_instructions.do_save(user=request.user, text=body["text"])
    except saved_instructions.BadInstructions as exc:
        raise ApiError(400, "invalid_instructions", str(exc)) from None
    return JsonResponse(saved_instructions.as_dict(saved))
