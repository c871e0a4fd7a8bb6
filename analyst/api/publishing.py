"""A session's published report: publish it, read its publication, revoke it."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_http_methods

from analyst.api.access import session_for
from analyst.api.auth import ApiError, api_view, error_response, json_body
from analyst.runs import publishing
from analyst.workspaces.roles import Action


@api_view
@require_http_methods(["GET", "POST", "DELETE"])
def publication(request: HttpRequest, session_id: str) -> HttpResponse:
    """GET: the publication (404 when there is none); POST ``{"sign_in_required": false}``
    publishes the report at /r/<token> (201, or 200 when it already was); DELETE revokes it (204)."""
    session = session_for(request, session_id, Action.SHARE)
    if request.method == "DELETE":
        if not publishing.do_revoke(session=session):
            return error_response(404, "not_found", "this session's report is not published")
        return HttpResponse(status=204)
    if request.method == "GET":
        found = publishing.get(session)
        if found is None:
            return error_response(404, "not_found", "this session's report is not published")
        return JsonResponse(publishing.as_dict(found))
    sign_in_required = json_body(request).get("sign_in_required")
    if sign_in_required is not None and not isinstance(sign_in_required, bool):
        raise ApiError(400, "invalid_request", "'sign_in_required' must be true or false")
    published, created = publishing.do_publish(session=session, sign_in_required=sign_in_required)
    return JsonResponse(publishing.as_dict(published), status=201 if created else 200)
