"""The Workspaces pages: the list (and making one), a workspace's members and invitations (drawn by
static/app/workspaces.js through /api/workspaces) and what the model is told and shown in its
sessions (its instructions and privacy, a form for its admins), accepting an invitation, and the
header's workspace switcher."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from analyst.models import Workspace
from analyst.models.sessions import Privacy
from analyst.models.workspaces import Role
from analyst.trust import instructions, privacy
from analyst.workspaces import invitations, members
from analyst.workspaces.roles import Action, may


@login_required
@require_GET
def workspaces_page(request: HttpRequest) -> HttpResponse:
    return render(request, "analyst/workspaces.html", {"api_url": "/api/workspaces"})


@login_required
@require_http_methods(["GET", "POST"])
def workspace_page(request: HttpRequest, workspace_id: int) -> HttpResponse:
    """The workspace; a POST is its settings form (admins and owners)."""
    try:
        workspace, role = members.get_visible(request.user, workspace_id)
    except members.NotAMember:
        raise Http404("no such workspace") from None
    context = {
        "workspace": workspace,
        "role": role,
        "manages": may(role, Action.MANAGE_MEMBERS) and workspace.personal_of_id is None,
        "grantable": Role.values if role == Role.OWNER else [Role.EDITOR, Role.VIEWER],
        "manages_settings": may(role, Action.MANAGE_SETTINGS),
        "instructions_text": workspace.instructions,
        "max_length": instructions.MAX_LENGTH,
    }
    if request.method == "POST":
        error = _save_settings(request, workspace)
        if not error:
            messages.info(request, "Saved: every session in the workspace follows from its next question.")
            return redirect("workspace", workspace_id=workspace.id)
        context.update(error=error, instructions_text=request.POST.get("instructions", ""))
        return render(request, "analyst/workspace.html", context, status=400)
    return render(request, "analyst/workspace.html", context)


def _save_settings(request: HttpRequest, workspace: Workspace) -> str:
    """Save what the settings form changed: "" when saved, else why not (a refusal is a 403 page)."""
    try:
        members.check_may(request.user, workspace, Action.MANAGE_SETTINGS)
    except members.NotAllowed as exc:
        raise PermissionDenied(str(exc)) from None
    if "instructions" not in request.POST:
        return "The form sent no instructions (an empty box clears them)."
    try:
        text = instructions.check_text(request.POST["instructions"])  # checked first: nothing half saved
    except instructions.BadInstructions as exc:
        return str(exc).capitalize() + "."
    if text != workspace.instructions:
        instructions.do_save_for_workspace(workspace=workspace, by=request.user, text=text)
    mode = Privacy.SCHEMA if request.POST.get("privacy") == Privacy.SCHEMA else ""
    if mode != workspace.privacy:
        privacy.do_set_for_workspace(workspace=workspace, by=request.user, mode=mode)
    return ""


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
