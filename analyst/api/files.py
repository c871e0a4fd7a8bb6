"""A session's files: upload one, list what the panel shows, download, correct how an upload is
read, describe one (its data dictionary), delete one."""

from __future__ import annotations

import json
from urllib.parse import urlencode

from django.conf import settings
from django.db import transaction
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from analyst.accounts import limits as user_limits
from analyst.api.access import session_for
from analyst.api.auth import ApiError, api_view, error_response, json_body
from analyst.audit import records as audit_records
from analyst.files import reports as file_reports
from analyst.files.artifacts import StorageFull
from analyst.kernels import session_files
from analyst.models import AnalysisSession, DataFile
from analyst.sessions import sessions
from analyst.trust import column_marks, dictionary
from analyst.uploads import uploads
from analyst.workspaces.roles import Action


@api_view
@require_http_methods(["GET", "POST"])
def files(request: HttpRequest, session_id: str) -> HttpResponse:
    session = session_for(request, session_id, Action.UPLOAD)
    if request.method == "GET":
        base = f"/api/sessions/{session.id}/files"
        return listing(session, f"{base}/download", owner_base=base)
    return upload(request, session)


def listing(session: AnalysisSession, download_base: str, *, owner_base: str | None = None) -> JsonResponse:
    """With ``owner_base`` (the owner's listing), an upload carries its own URL (to change what the
    user says of it), the URLs that delete it and change how it is read, and a failed one the URL
    that retries it."""
    entries = session_files.listing(session)
    for entry in entries:
        entry["download_url"] = f"{download_base}?{urlencode({'path': entry['path']})}"
        if owner_base and entry["kind"] == "upload":
            entry["url"] = f"{owner_base}/{entry['id']}"
            entry["delete_url"] = f"{owner_base}/{entry['id']}"
            entry["options_url"] = f"{owner_base}/{entry['id']}/options"
            if entry.get("status") == "failed":
                entry["retry_url"] = f"{owner_base}/{entry['id']}/retry"
    body = {"files": entries, "max_upload": settings.ANALYST_MAX_UPLOAD, "accept": list(uploads.EXTENSIONS)}
    return JsonResponse(body)


@api_view
@require_http_methods(["PATCH", "DELETE"])
def file(request: HttpRequest, session_id: str, file_id: int) -> HttpResponse:
    """Change what the user says of an upload (PATCH), or delete it: from the sandbox, our storage
    and the session (owner only)."""
    session = sessions.get_for(request.user, session_id, Action.UPLOAD)
    if request.method == "PATCH":
        return changed_file(request, session, file_id)
    uploads.do_delete(session=session, file_id=file_id)
    return JsonResponse({"deleted": file_id})


PATCHABLE = ("dictionary", "column_marks")


def changed_file(request: HttpRequest, session: AnalysisSession, file_id: int) -> JsonResponse:
    """``{"dictionary": {…}}`` replaces the upload's data dictionary, ``{"column_marks": {…}}``
    marks its columns (analyst.trust.column_marks); all or nothing is changed."""
    data_file = uploads.owned_file(session, file_id)
    body = json_body(request)
    unknown = sorted(set(body) - set(PATCHABLE))
    if unknown or not body:
        fields = " or ".join(repr(field) for field in PATCHABLE)
        instead = f", not {unknown[0]!r}" if unknown else ""
        raise ApiError(400, "invalid_request", f"send {fields}{instead}")
    with transaction.atomic():
        if "dictionary" in body:
            try:
                dictionary.do_set(data_file=data_file, dictionary=body["dictionary"])
            except dictionary.BadDictionary as exc:
                raise ApiError(400, "invalid_dictionary", str(exc)) from None
        if "column_marks" in body:
            try:
                column_marks.do_mark(data_file=data_file, marks=body["column_marks"])
            except column_marks.BadMarks as exc:
                raise ApiError(400, "invalid_column_marks", str(exc)) from None
    return JsonResponse({"file": file_reports.upload_entry(data_file)})


@api_view
@require_POST
def read_options(request: HttpRequest, session_id: str, file_id: int) -> HttpResponse:
    """Read an upload again with the delimiter, encoding, decimal mark, header row or sheet the
    user chose (JSON; null for "detect"): 202, and a new ``file_added`` once it is described."""
    session = sessions.get_for(request.user, session_id, Action.UPLOAD)
    try:
        options = json.loads(request.body or b"{}")
        data_file = uploads.do_set_read_options(session=session, file_id=file_id, options=options)
    except ValueError:
        raise ApiError(400, "invalid_request", "send the options as a JSON object") from None
    except uploads.BadOptions as exc:
        raise ApiError(400, "invalid_options", str(exc)) from None
    except uploads.StillReading as exc:
        raise ApiError(409, "still_reading", str(exc)) from None
    return placement_answer(data_file, file_reports.upload_entry(data_file))


@api_view
@require_POST
def retry(request: HttpRequest, session_id: str, file_id: int) -> HttpResponse:
    """Place a file whose placement failed again (owner only: 404 for anyone else)."""
    session = sessions.get_for(request.user, session_id, Action.UPLOAD)
    try:
        data_file = uploads.do_retry_placement(session=session, file_id=file_id)
    except uploads.PlacementNotFailed as exc:
        raise ApiError(409, "not_failed", str(exc)) from None
    return placement_answer(data_file, file_reports.upload_entry(data_file))


@api_view
@require_GET
def download(request: HttpRequest, session_id: str) -> HttpResponse:
    return download_response(sessions.get_for(request.user, session_id), request.GET.get("path", ""))


def download_response(session: AnalysisSession, path: str) -> HttpResponse:
    if not path:
        raise ApiError(400, "invalid_request", "say which file: ?path=")
    found = session_files.download(session, path)
    audit_records.record_for_session("download", session, detail={"path": path})
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
    except user_limits.LimitReached as exc:
        raise ApiError(507, exc.code, str(exc)) from None
    return placement_answer(data_file, file_reports.upload_entry(data_file))


def placement_answer(data_file: DataFile, described: dict[str, object]) -> JsonResponse:
    """202, or 503 while the broker is unreachable: the file is kept and placed once it is back."""
    if data_file.enqueued is False:
        message = (
            f"{data_file.name} is saved, but the task queue is unreachable just now: it goes into"
            " the sandbox as soon as the queue is back, with no need to upload it again."
        )
        return error_response(503, "queue_unavailable", message, file=described)
    return JsonResponse({"file": described}, status=202)
