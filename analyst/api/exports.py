"""A session's export: GET /api/sessions/<id>/export?format=ipynb|py|html, as an attachment."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from analyst.api.auth import ApiError, api_view
from analyst.sessions import exports, sessions


@api_view
@require_GET
def export(request: HttpRequest, session_id: str) -> HttpResponse:
    session = sessions.get_owned(request.user, session_id)
    try:
        made = exports.export(session, request.GET.get("format", "ipynb"))
    except exports.UnknownFormat as exc:
        raise ApiError(400, "invalid_request", str(exc)) from None
    response = HttpResponse(made.content, content_type=made.content_type)
    response["Content-Disposition"] = f'attachment; filename="{made.filename}"'
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "sandbox; default-src 'none'"  # never a page of this site
    return response
