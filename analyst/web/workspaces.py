"""The Workspaces pages: the list (and making one), a workspace's members and invitations (drawn by
static/app/workspaces.js through /api/workspaces), accepting an invitation, and the header's
workspace switcher."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from analyst.models import Workspace
from analyst.models.workspaces import Role
from analyst.workspaces import invitations, members
from analyst.workspaces.roles import Action, may


@login_required
@require_GET
def workspaces_page(request: HttpRequest) -> HttpResponse:
    return render(request, "analyst/workspaces.html", {"api_url": "/api/workspaces"})


@login_required
@require_GET
def workspace_page(request: HttpRequest, workspace_id: int) -> HttpResponse:
    try:
        workspace, role = members.get_visible(request.user, workspace_id)
    except members.NotAMember:
        raise Http404("no such workspace") from None
    context = {
        "workspace": workspace,
        "role": role,
        "manages": may(role, Action.MANAGE_MEMBERS) and workspace.personal_of_id is None,
        "grantable": Role.values if role == Role.OWNER else [Role.EDITOR, Role.VIEWER],
    }
    return render(request, "analyst/workspace.html", context)


@require_http_methods(["GET", "POST"])
def invitation_page(request: HttpRequest, token: str) -> HttpResponse:
    """What the invitation offers, and Accept; signing in first comes back here."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    try:
        invitation = invitations.find(token)
    except invitations.InvitationUnusable as exc:
        return render(request, "analyst/invitation.html", {"unusable": str(exc)}, status=410)
    if request.method == "GET":
        return render(request, "analyst/invitation.html", {"invitation": invitation})
    try:
        membership = invitations.do_accept(token=token, user=request.user)
    except invitations.InvitationUnusable as exc:
        return render(request, "analyst/invitation.html", {"unusable": str(exc)}, status=410)
    messages.success(request, f"You are a member of {membership.workspace.name}, as {membership.role}.")
    return redirect("workspace", workspace_id=membership.workspace_id)


def switcher(request: HttpRequest) -> dict[str, object]:
    """The header's workspace switcher: the user's workspaces, and the one the sessions list shows."""
    if not getattr(request, "user", None) or not request.user.is_authenticated:
        return {}
    listed = [workspace for workspace, _ in members.workspaces_of(request.user)]
    chosen = request.GET.get("workspace", "") if request.path == "/sessions/" else ""
    current = next((w for w in listed if str(w.id) == chosen), None)
    return {"switcher_workspaces": listed, "switcher_current": current}


def chosen_workspace(request: HttpRequest) -> Workspace | None:
    """The workspace a page's ``workspace`` parameter names (None without one); Http404 when
    the user is not its member."""
    chosen = request.GET.get("workspace") or request.POST.get("workspace")
    if not chosen:
        return None
    try:
        workspace, _ = members.get_visible(request.user, chosen)
    except members.NotAMember:
        raise Http404("no such workspace") from None
    return workspace


def creation_refused(user: AbstractBaseUser, workspace: Workspace | None) -> str:
    """Why the user may not make a session in the workspace ("" when they may)."""
    if workspace is None:
        return ""
    try:
        members.check_may(user, workspace, Action.CREATE_SESSION)
    except members.WorkspaceError as exc:
        return str(exc)
    return ""
