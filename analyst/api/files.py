"""A session's files: upload a CSV, list what the panel shows, download one."""

from __future__ import annotations

from urllib.parse import urlencode

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from analyst import session_files, sessions, uploads
from analyst.api.auth import ApiError, api_view
from analyst.artifacts import StorageFull
from analyst.models import AnalysisSession


@api_view
@require_http_methods(["GET", "POST"])
def files(request: HttpRequest, session_id: str) -> HttpResponse:
    session = sessions.get_owned(request.user, session_id)
    if request.method == "GET":
        base = f"/api/sessions/{session.id}/files"
        return listing(session, f"{base}/download", retry_base=base)
    return upload(request, session)


def listing(session: AnalysisSession, download_base: str, *, retry_base: str | None = None) -> JsonResponse:
    """With ``retry_base`` (the owner's listing), a failed upload carries the URL that retries it."""
    entries = session_files.listing(session)
    for entry in entries:
        entry["download_url"] = f"{download_base}?{urlencode({'path': entry['path']})}"
        if retry_base and entry.get("status") == "failed":
            entry["retry_url"] = f"{retry_base}/{entry['id']}/retry"
    return JsonResponse({"files": entries, "max_upload": settings.ANALYST_MAX_UPLOAD})


@api_view
@require_POST
def retry(request: HttpRequest, session_id: str, file_id: int) -> HttpResponse:
    """Place a file whose placement failed again (owner only: 404 for anyone else)."""
    session = sessions.get_owned(request.user, session_id)
    try:
        data_file = uploads.do_retry_placement(session=session, file_id=file_id)
    except uploads.PlacementNotFailed as exc:
        raise ApiError(409, "not_failed", str(exc)) from None
    return JsonResponse({"file": uploads.placement_dict(data_file)}, status=202)


@api_view
@require_GET
def download(request: HttpRequest, session_id: str) -> HttpResponse:
    return download_response(sessions.get_owned(request.user, session_id), request.GET.get("path", ""))


def download_response(session: AnalysisSession, path: str) -> HttpResponse:
    if not path:
        raise ApiError(400, "invalid_request", "say which file: ?path=")
    found = session_files.download(session, path)
    response = StreamingHttpResponse(found.chunks, content_type=found.content_type)
    if found.size is not None:
        response["Content-Length"] = str(found.size)
    response["Content-Disposition"] = f'attachment; filename="{_safe_name(found.name)}"'
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "sandbox; default-src 'none'"
    return response


def _safe_name(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._- " else "_" for c in name) or "download"


def upload(request: HttpRequest, session: AnalysisSession) -> JsonResponse:
    sent = request.FILES.get("file")
    if sent is None:
        raise ApiError(400, "invalid_request", "send the file as multipart form field 'file'")
    try:
        data_file = uploads.do_upload(session=session, upload=sent)
    except uploads.UploadRefused as exc:
        raise ApiError(400, "upload_refused", str(exc)) from None
    except StorageFull as exc:
        raise ApiError(507, exc.code, str(exc)) from None
    return JsonResponse({"file": uploads.file_dict(data_file)}, status=202)
