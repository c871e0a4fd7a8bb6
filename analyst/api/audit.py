"""A workspace's audit log, for its owners and admins: GET /api/workspaces/<id>/audit (a page,
newest first: ?user=&action=&before=<entry id>&limit=) and /audit.jsonl (the same entries,
streamed as JSON lines). Read only: no method changes or deletes an entry."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, JsonResponse, StreamingHttpResponse
from django.views.decorators.http import require_GET

from analyst.api.auth import ApiError, api_view
from analyst.audit import reading
from analyst.models import Workspace


@api_view
@require_GET
def audit_page(request: HttpRequest, workspace_id: int) -> JsonResponse:
    workspace = _readable(request, workspace_id)
    try:
        return JsonResponse(reading.page(workspace, request.GET))
    except reading.BadFilter as exc:
        raise ApiError(400, "invalid_request", str(exc)) from None


@api_view
@require_GET
def audit_lines(request: HttpRequest, workspace_id: int) -> StreamingHttpResponse:
    workspace = _readable(request, workspace_id)
    try:
        reading.filtered(workspace, request.GET)
        reading.page_size(request.GET)
    except reading.BadFilter as exc:  # said before the stream starts, while a status can still say it
        raise ApiError(400, "invalid_request", str(exc)) from None
    response = StreamingHttpResponse(
        _lines(reading.streamed(workspace, request.GET)), content_type="application/jsonl"
    )
    response["Content-Disposition"] = f'attachment; filename="audit-workspace-{workspace.id}.jsonl"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


def _readable(request: HttpRequest, workspace_id: int) -> Workspace:
    try:
        return reading.check_reader(request.user, workspace_id)
    except PermissionDenied as exc:
        raise ApiError(403, "forbidden", str(exc)) from None


def _lines(entries: Iterator[dict[str, Any]]) -> Iterator[bytes]:
    for entry in entries:
        yield json.dumps(entry, ensure_ascii=False).encode() + b"\n"
