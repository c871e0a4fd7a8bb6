"""A session's secret environment variables: listed by name, added (or replaced), deleted. A value
goes in and never comes out: every answer holds names only."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_http_methods

from analyst.api.access import session_for
from analyst.api.auth import ApiError, api_view, json_body
from analyst.connections import session_secrets
from analyst.kernels import session_connections
from analyst.models import AnalysisSession
from analyst.sessions import sessions
from analyst.workspaces.roles import Action


def _listed(session: AnalysisSession, *, status: int = 200) -> JsonResponse:
    names = session_secrets.secret_names(session)
    return JsonResponse({"secrets": [{"name": name} for name in names]}, status=status)


@api_view
@require_http_methods(["GET", "POST"])
def session_secrets_collection(request: HttpRequest, session_id: str) -> JsonResponse:
    session = session_for(request, session_id, Action.SESSION_SETTINGS)
    if request.method == "GET":
        return _listed(session)
    body = json_body(request)
    try:
        name, value = session_secrets.check_secret(
            session=session, name=body.get("name"), value=body.get("value")
        )
    except session_secrets.BadSecret as exc:
        raise ApiError(400, "invalid_secret", str(exc)) from None
    session_secrets.do_set_secret(session=session, name=name, value=value)
    session_connections.reopen(session)  # the running kernel sees it from its next cell
    return _listed(session, status=201)


@api_view
@require_http_methods(["DELETE"])
def session_secret(request: HttpRequest, session_id: str, name: str) -> HttpResponse:
    session = sessions.get_for(request.user, session_id, Action.SESSION_SETTINGS)
    if not session_secrets.do_delete_secret(session=session, name=name):
        raise ApiError(404, "not_found", f"this session has no secret named {name[:128]!r}")
    session_connections.reopen(session)
    return HttpResponse(status=204)
