"""A session's export: GET /api/sessions/<id>/export?format=ipynb|py|html, as an attachment;
with &bundle=zip, the notebook or the script in a .zip with its data and a requirements.txt."""

from __future__ import annotations

from django.http import FileResponse, HttpRequest, HttpResponse, HttpResponseBase
from django.views.decorators.http import require_GET

from analyst.api.auth import ApiError, api_view
from analyst.audit import records as audit_records
from analyst.models import AnalysisSession
from analyst.sessions import exports, sessions
from analyst.workspaces.roles import Action


@api_view
@require_GET
def export(request: HttpRequest, session_id: str) -> HttpResponseBase:
    session = sessions.get_for(request.user, session_id, Action.EXPORT)
    format, bundle = request.GET.get("format", "ipynb"), request.GET.get("bundle", "")
    if bundle not in ("", "zip"):
        raise ApiError(400, "invalid_request", f"unknown bundle {bundle!r}; the one bundle is zip")
    try:
        response = _bundle(session, format) if bundle else _single(session, format)
    except exports.UnknownFormat as exc:
        raise ApiError(400, "invalid_request", str(exc)) from None
    audit_records.record_for_session("export", session, detail={"format": format, "bundle": bundle})
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "sandbox; default-src 'none'"  # never a page of this site
    return response


def _single(session: AnalysisSession, format: str) -> HttpResponse:
    made = exports.export(session, format)
    response = HttpResponse(made.content, content_type=made.content_type)
    response["Content-Disposition"] = f'attachment; filename="{made.filename}"'
    return response


def _bundle(session: AnalysisSession, format: str) -> FileResponse:
    made = exports.export_bundle(session, format)
    return FileResponse(made.file, as_attachment=True, filename=made.filename, content_type="application/zip")
