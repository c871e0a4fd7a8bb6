"""Workspace endpoints: workspaces, their members and invitations, and accepting an invitation."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_http_methods, require_POST

from analyst.accounts import workspace_storage
from analyst.api.auth import ApiError, api_view, json_body
from analyst.audit import records as audit_records
from analyst.models import Membership, Workspace
from analyst.models.workspaces import Role
from analyst.trust import privacy
from analyst.workspaces import invitations, members
from analyst.workspaces.roles import Action, may


@contextlib.contextmanager
def refusals() -> Iterator[None]:
    """A workspace's refusals, as the API says them."""
    try:
        yield
    except members.NotAMember as exc:
        raise ApiError(404, "not_found", str(exc)) from None
    except members.NotAllowed as exc:
        raise ApiError(403, "forbidden", str(exc)) from None
    except members.Invalid as exc:
        raise ApiError(400, "invalid_request", str(exc)) from None
    except members.Conflict as exc:
        raise ApiError(409, "conflict", str(exc)) from None
    except invitations.InvitationUnusable as exc:
        raise ApiError(410, "invitation_unusable", str(exc)) from None


def workspace_dict(workspace: Workspace, role: Role) -> dict[str, object]:
    return {
        "id": workspace.id,
        "name": workspace.name,
        "personal": workspace.personal_of_id is not None,
        "role": role,
    }


def member_dict(membership: Membership) -> dict[str, object]:
    return {"id": membership.id, "username": membership.user.get_username(), "role": membership.role}


@api_view
@require_http_methods(["GET", "POST"])
def workspaces_collection(request: HttpRequest) -> JsonResponse:
    if request.method == "GET":
        listed = members.workspaces_of(request.user)
        return JsonResponse({"workspaces": [workspace_dict(w, role) for w, role in listed]})
    with refusals():
        workspace = members.do_create(creator=request.user, name=json_body(request).get("name"))
    return JsonResponse(workspace_dict(workspace, Role.OWNER), status=201)


@api_view
@require_http_methods(["GET", "PATCH", "DELETE"])
def workspace_detail(request: HttpRequest, workspace_id: int) -> JsonResponse:
    with refusals():
        workspace, role = members.get_visible(request.user, workspace_id)
        if request.method == "DELETE":
            members.do_delete(workspace=workspace, by=request.user)
            return JsonResponse({"deleted": workspace_id})
        if request.method == "PATCH":
            body = json_body(request)
            if "privacy" in body:  # checked first: a bad value changes nothing
                privacy.check_workspace_mode(body["privacy"])
            if "storage_limit" in body:
                limit = check_storage_limit(request, workspace, body["storage_limit"])
            if "name" in body or not {"privacy", "storage_limit"} & body.keys():
                members.do_rename(workspace=workspace, by=request.user, name=body.get("name"))
            if "privacy" in body:
                privacy.do_set_for_workspace(workspace=workspace, by=request.user, mode=body["privacy"])
            if "storage_limit" in body:
                workspace_storage.do_set_limit(workspace=workspace, limit=limit)
                detail = {"limit": limit}
                audit_records.record(
                    "workspace_storage", user=request.user, workspace=workspace, detail=detail
                )
    # "privacy": "schema" when every session in it is in schema mode (analyst.trust.privacy)
    detail = {"privacy": workspace.privacy, "storage": storage_dict(workspace)}
    return JsonResponse({**workspace_dict(workspace, role), **detail})


def check_storage_limit(request: HttpRequest, workspace: Workspace, value: object) -> int | None:
    """The storage limit an admin or owner sets for a team workspace (None: the setting's)."""
    if not may(members.check_member(request.user, workspace), Action.MANAGE_SETTINGS):
        raise members.NotAllowed(
            f"only an admin or an owner of {workspace.name} may change its storage limit: ask one of them"
        )
    if workspace.personal_of_id is not None:
        raise members.Conflict("a personal workspace's storage is its owner's: it has no limit of its own")
    try:
        return workspace_storage.check_limit(value)
    except workspace_storage.BadLimit as exc:
        raise members.Invalid(str(exc)) from None


def storage_dict(workspace: Workspace) -> dict[str, object] | None:
    """What a team workspace's sessions store, and its limit; None for a personal one (its
    owner's limit is its limit)."""
    return None if workspace.personal_of_id is not None else workspace_storage.as_dict(workspace)


@api_view
@require_http_methods(["GET", "POST"])
def members_collection(request: HttpRequest, workspace_id: int) -> JsonResponse:
    with refusals():
        workspace, _ = members.get_visible(request.user, workspace_id)
        if request.method == "GET":
            listed = workspace.memberships.select_related("user")
            return JsonResponse({"members": [member_dict(m) for m in listed]})
        body = json_body(request)
        members.check_may(request.user, workspace, Action.MANAGE_MEMBERS)  # before saying who exists
        user = members.find_user(username=body.get("username"), email=body.get("email"))
        added = members.do_add(workspace=workspace, by=request.user, user=user, role=body.get("role"))
        audit_records.record_membership("member_add", added, by=request.user)
    return JsonResponse(member_dict(added), status=201)


@api_view
@require_http_methods(["PATCH", "DELETE"])
def member_detail(request: HttpRequest, workspace_id: int, membership_id: int) -> JsonResponse:
    with refusals():
        workspace, _ = members.get_visible(request.user, workspace_id)
        membership = members.get_membership(workspace, membership_id)
        if request.method == "DELETE":
            if membership.user_id == request.user.pk:
                gone = members.do_leave(workspace=workspace, user=request.user)
            else:
                gone = members.do_remove(membership=membership, by=request.user)
            audit_records.record_membership("member_remove", gone, by=request.user)
            return JsonResponse({"deleted": membership_id})
        changed = members.do_change_role(
            membership=membership, by=request.user, role=json_body(request).get("role")
        )
        was = {"was": membership.role}
        audit_records.record_membership("member_role", changed, by=request.user, detail=was)
    return JsonResponse(member_dict(changed))


@api_view
@require_http_methods(["GET", "POST"])
def invitations_collection(request: HttpRequest, workspace_id: int) -> JsonResponse:
    with refusals():
        workspace, _ = members.get_visible(request.user, workspace_id)
        members.check_may(request.user, workspace, Action.MANAGE_MEMBERS)
        if request.method == "GET":
            return JsonResponse(
                {"invitations": [invitations.as_dict(i) for i in invitations.pending(workspace)]}
            )
        body = json_body(request)
        issued = invitations.do_invite(
            workspace=workspace,
            by=request.user,
            role=body.get("role"),
            email=body.get("email"),
            base_url=request.build_absolute_uri("/"),
        )
    return JsonResponse({**invitations.as_dict(issued.invitation), "url": issued.url}, status=201)


@api_view
@require_http_methods(["DELETE"])
def invitation_detail(request: HttpRequest, workspace_id: int, invitation_id: int) -> JsonResponse:
    with refusals():
        workspace, _ = members.get_visible(request.user, workspace_id)
        members.check_may(request.user, workspace, Action.MANAGE_MEMBERS)
        invitations.do_revoke(invitation=invitations.get_pending(workspace, invitation_id), by=request.user)
    return JsonResponse({"deleted": invitation_id})


@api_view
@require_POST
def accept(request: HttpRequest, token: str) -> JsonResponse:
    with refusals():
        membership = invitations.do_accept(token=token, user=request.user)
        audit_records.record_membership("member_add", membership, by=request.user, detail={"invited": True})
    return JsonResponse({"workspace": workspace_dict(membership.workspace, Role(membership.role))})
