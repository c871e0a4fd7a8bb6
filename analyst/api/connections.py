"""Connections, a user's own and their workspaces' (made, listed, changed, deleted, tested: a
workspace's by its admins), and the ones each session uses (attached, detached). A change reaches
the running sandboxes of the sessions concerned at once; the secret is never in an answer."""

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
from analyst.models import AnalysisSession, Workspace
from analyst.sessions import sessions
from analyst.trust import connection_dictionary
from analyst.workspaces import members
from analyst.workspaces.roles import Action


@api_view
@require_http_methods(["GET", "POST"])
def connections_collection(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        chosen = request.GET.get("workspace")
        workspace = None if chosen is None else _visible_workspace(request, chosen)
        listed = registry.listed(request.user, workspace=workspace)
        return JsonResponse({"connections": [registry.as_dict(c) for c in listed]})
    fields, file = _fields(request)
    workspace = registry.check_workspace(request.user, fields.pop("workspace", None) or None)
    try:
        connection = registry.do_create(owner=request.user, fields=fields, file=file, workspace=workspace)
    except BadConnection as exc:
        raise _refused(exc) from None
    return JsonResponse({"connection": registry.as_dict(connection)}, status=201)


@api_view
@require_http_methods(["GET", "PATCH", "DELETE"])
def connection_detail(request: HttpRequest, connection_id: int) -> HttpResponse:
    action = Action.READ if request.method == "GET" else Action.MANAGE_CONNECTIONS
    connection = registry.get_for(request.user, connection_id, action)
    if request.method == "GET":
        return JsonResponse({"connection": registry.as_dict(connection)})
    users = list(AnalysisSession.objects.filter(attachments__connection=connection))
    if request.method == "DELETE":
        registry.do_delete(connection=connection)
        for session in users:
            live.reopen(session)
        return HttpResponse(status=204)
    fields = json_body(request)
    dictionary = fields.pop("dictionary", None)  # {} clears it
    try:
        if dictionary is not None:  # checked first: a bad one changes nothing
            connection_dictionary.check(connection, dictionary)
        if fields or dictionary is None:
            registry.do_update(connection=connection, fields=fields)
        if dictionary is not None:  # what the model reads of its tables: no sandbox follows it
            connection_dictionary.do_set(connection=connection, dictionary=dictionary)
    except BadConnection as exc:
        raise _refused(exc) from None
    except connection_dictionary.BadDictionary as exc:
        raise ApiError(400, "invalid_dictionary", str(exc)) from None
    if fields or dictionary is None:
        for session in users:
            live.reopen(session)
    return JsonResponse({"connection": registry.as_dict(connection)})


@api_view
@require_POST
def test(request: HttpRequest, connection_id: int) -> JsonResponse:
    """Connect from a throwaway sandbox: what was found, or why it failed, in words."""
    connection = registry.get_for(request.user, connection_id, Action.MANAGE_CONNECTIONS)
    return JsonResponse(live.test(connection))


@api_view
@require_http_methods(["GET", "POST"])
def session_connections(request: HttpRequest, session_id: str) -> HttpResponse:
    session = session_for(request, session_id, Action.SESSION_SETTINGS)
    if request.method == "GET":
        return JsonResponse({"connections": [registry.as_dict(c) for c in attachments.attached(session)]})
    connection = registry.get_named(request.user, json_body(request).get("name"), session=session)
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


def _visible_workspace(request: HttpRequest, workspace_id: str) -> Workspace:
    """?workspace=<id>: one the user is a member of; 404 for any other."""
    try:
        workspace, _ = members.get_visible(request.user, workspace_id)
    except members.NotAMember as exc:
        raise ApiError(404, "not_found", str(exc)) from None
    return workspace


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
