"""A user's connections (made, listed, changed, deleted, tested) and the ones each session of theirs
uses (attached, detached). A change reaches the running sandboxes of the sessions concerned at
once; the secret is never in an answer."""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_http_methods, require_POST

from analyst.api.access import session_for
from analyst.api.auth import ApiError, api_view, json_body
from analyst.connections import attachments, registry
from analyst.connections.kinds import BadConnection
from analyst.kernels import session_connections as live
from analyst.models import AnalysisSession
from analyst.sessions import sessions
from analyst.workspaces.roles import Action


@api_view
@require_http_methods(["GET", "POST"])
def connections_collection(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        return JsonResponse({"connections": [registry.as_dict(c) for c in registry.listed(request.user)]})
    fields, file = _fields(request)
    try:
        connection = registry.do_create(owner=request.user, fields=fields, file=file)
    except BadConnection as exc:
        raise _refused(exc) from None
    return JsonResponse({"connection": registry.as_dict(connection)}, status=201)


@api_view
@require_http_methods(["GET", "PATCH", "DELETE"])
def connection_detail(request: HttpRequest, connection_id: int) -> HttpResponse:
    connection = registry.get_owned(request.user, connection_id)
    if request.method == "GET":
        return JsonResponse({"connection": registry.as_dict(connection)})
    users = list(AnalysisSession.objects.filter(attachments__connection=connection))
    if request.method == "DELETE":
        registry.do_delete(connection=connection)
        for session in users:
            live.reopen(session)
        return HttpResponse(status=204)
    try:
        registry.do_update(connection=connection, fields=json_body(request))
    except BadConnection as exc:
        raise _refused(exc) from None
    for session in users:
        live.reopen(session)
    return JsonResponse({"connection": registry.as_dict(connection)})


@api_view
@require_POST
def test(request: HttpRequest, connection_id: int) -> JsonResponse:
    """Connect from a throwaway sandbox: what was found, or why it failed, in words."""
    connection = registry.get_owned(request.user, connection_id)
    return JsonResponse(live.test(connection))


@api_view
@require_http_methods(["GET", "POST"])
def session_connections(request: HttpRequest, session_id: str) -> HttpResponse:
    session = session_for(request, session_id, Action.SESSION_SETTINGS)
    if request.method == "GET":
        return JsonResponse({"connections": [registry.as_dict(c) for c in attachments.attached(session)]})
    connection = registry.get_named(request.user, json_body(request).get("name"))
    try:
        added = live.attach(session, connection)
    except BadConnection as exc:
        raise _refused(exc) from None
    return JsonResponse({"connection": registry.as_dict(connection)}, status=201 if added else 200)


@api_view
@require_http_methods(["DELETE"])
def session_connection(request: HttpRequest, session_id: str, connection_id: int) -> HttpResponse:
    session = sessions.get_for(request.user, session_id, Action.SESSION_SETTINGS)
    attachments.do_detach(session=session, connection_id=connection_id)
    live.reopen(session)
    return HttpResponse(status=204)


def _fields(request: HttpRequest) -> tuple[dict[str, Any], Any]:
    """A connection's fields from JSON, or from a multipart form (a file kind's database in
    ``file``; ``options`` as JSON text, ``read_only`` as true/false)."""
    if request.content_type != "multipart/form-data":
        return json_body(request), None
    fields: dict[str, Any] = {key: request.POST[key] for key in request.POST}
    if "read_only" in fields:
        fields["read_only"] = fields["read_only"].strip().lower() in ("true", "1", "on", "yes")
    if "options" in fields:
        try:
            fields["options"] = json.loads(fields["options"] or "{}")
        except ValueError:
            raise ApiError(400, "invalid_connection", "options must be a JSON object") from None
    return fields, request.FILES.get("file")


def _refused(exc: BadConnection) -> ApiError:
    code = "name_taken" if isinstance(exc, registry.NameTaken) else "invalid_connection"
    return ApiError(400, code, str(exc))
