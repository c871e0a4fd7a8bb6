"""Uploading a CSV into a session."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_POST

from analyst import sessions, uploads
from analyst.api.auth import ApiError, api_view


@api_view
@require_POST
def upload(request: HttpRequest, session_id: str) -> JsonResponse:
    session = sessions.get_owned(request.user, session_id)
    sent = request.FILES.get("file")
    if sent is None:
        raise ApiError(400, "invalid_request", "send the file as multipart form field 'file'")
    try:
        data_file = uploads.do_upload(session=session, upload=sent)
    except uploads.UploadRefused as exc:
        raise ApiError(400, "upload_refused", str(exc)) from None
    return JsonResponse({"file": uploads.file_dict(data_file)}, status=202)
