"""The browser's pages: my sessions, a session, a shared session. The session page's
live parts are static/app/*.js, which talk to the JSON API and the WebSocket."""

from __future__ import annotations

import json
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from analyst.accounts import limits as user_limits
from analyst.files.artifacts import StorageFull
from analyst.models import ShareLink
from analyst.sessions import branches, exports, forks, samples, sessions, shares
from analyst.trust import privacy
from analyst.turns import titles
from analyst.turns.agent.providers import availability
from analyst.web import limits_shown, workspaces
from analyst.workspaces import roles
from analyst.workspaces.roles import Action

RECENT_SESSIONS = 20  # in the session page's sidebar


def home(request: HttpRequest) -> HttpResponse:
    return redirect("sessions" if request.user.is_authenticated else "login")


@login_required
def session_list(request: HttpRequest) -> HttpResponse:
    query = request.GET.get("q", "").strip()[:200]
    workspace = workspaces.chosen_workspace(request)
    found = sessions.search(request.user, query, workspace).prefetch_related("files")
    models = availability.usable(settings.ANALYST_MODELS)  # only what can answer here
    return render(
        request,
        "analyst/sessions.html",
        {
            "sessions": found,
            "query": query,
            "has_sessions": sessions.listed(request.user).exists(),
            "models": models,
            "default_model": _default_model(models),
            "unavailable": [] if models else [availability.check(m) for m in settings.ANALYST_MODELS],
            "sample": samples.US_MACRO,
            "limits": limits_shown.shown(request.user),
            "workspace": workspace,
        },
    )


def _default_model(usable: list[str]) -> str:
    """The configured default when it can answer here, else the first that can ("" if none)."""
    if settings.ANALYST_DEFAULT_MODEL in usable:
        return settings.ANALYST_DEFAULT_MODEL
    return usable[0] if usable else ""


@login_required
@require_POST
def session_new(request: HttpRequest) -> HttpResponse:
    workspace = workspaces.chosen_workspace(request)
    refused = workspaces.creation_refused(request.user, workspace)
    if workspace is not None and refused:
        messages.error(request, refused)
        return redirect(f"{reverse('sessions')}?workspace={workspace.id}")
    try:
        session = sessions.do_create(
            owner=request.user,
            model=request.POST.get("model"),
            title=request.POST.get("title"),
            workspace=workspace,
        )
    except sessions.InvalidModel as exc:
        messages.error(request, str(exc))
        return redirect("sessions")
    return redirect("session", session_id=session.id)


@login_required
@require_POST
def session_sample(request: HttpRequest) -> HttpResponse:
    """A new session holding a sample data set, its question ready in the composer."""
    sample = samples.get(request.POST.get("sample"))
    if sample is None:
        messages.error(request, "No such sample data set.")
        return redirect("sessions")
    model = _default_model(availability.usable(settings.ANALYST_MODELS)) or None
    try:
        session = samples.do_start_sample(owner=request.user, sample=sample, model=model)
    except (StorageFull, user_limits.LimitReached) as exc:
        messages.error(request, str(exc))
        return redirect("sessions")
    return redirect(f"{reverse('session', args=[session.id])}?{urlencode({'try': sample.key})}")


# The page's first read of its log (static/app/events.js: the first catch-up, folded at
# render.js's FOLD_LINES), named in the page's head so the browser asks for it while it loads the
# page's modules, and the page's own request gets that answer (tests/e2e/test_long_sessions.py
# checks that it stays one request).
FIRST_READ = "?after=0&limit=5000&fold=300"


@login_required
def session_page(request: HttpRequest, session_id: str) -> HttpResponse:
    session = sessions.get_for(request.user, session_id)
    role = sessions.role_in(request.user, session)
    changes, owns = roles.may(role, Action.ASK), session.owner_id == request.user.pk
    base = f"/api/sessions/{session.id}"
    app = {
        # A viewer reads it live, read-only, as a share link's reader does.
        "mode": "owner" if changes else "viewer",
        "readonly-text": "" if changes else roles.refusal(role, Action.ASK, roles.workspace_of(session)),
        "session-id": str(session.id),
        "title": session.title,
        "untitled": titles.UNTITLED,  # the name a question replaces (static/app/title.js)
        "ws-url": f"/ws/sessions/{session.id}/",
        "events-url": f"{base}/events",
        "api-base": base,
        "artifact-base": "/api/artifacts",
        "files-url": f"{base}/files",
        "models": json.dumps(availability.usable(settings.ANALYST_MODELS)),
        "model": session.model,
        "max-upload": str(settings.ANALYST_MAX_UPLOAD),
        "approve-cells": session.approve_cells,  # which model cells wait (static/app/approval_setting.js)
        # What the model may see (static/app/privacy_setting.js); the workspace's name when it sets it.
        "privacy": privacy.effective(session),
        "privacy-set-by": privacy.as_dict(session)["privacy_set_by"] or "",
        "send-chart-images": "true" if session.send_chart_images else "false",
        # Why the session's model cannot answer here ("" when it can): Send is off, cells run.
        "model-unavailable": availability.check(session.model).reason,
        # Branches made from this session's questions, each linked at its question.
        "branches": json.dumps(branches.branches_of(session)),
    }
    sample = samples.get(request.GET.get("try"))
    if sample is not None and not session.turns.exists():
        app["suggestion"] = sample.question
    context = {
        "session": session,
        "app": app,
        "first_read": f"{base}/events{FIRST_READ}",
        "share_links": shares.active(session),
        "shared": False,
        "may_change": changes,
        "may_delete": roles.may(role, Action.DELETE_SESSION, owns_session=owns),
        "recent_sessions": sessions.listed(request.user)[:RECENT_SESSIONS],
    }
    return render(request, "analyst/session.html", context)


@login_required
@require_POST
def session_rename(request: HttpRequest, session_id: str) -> HttpResponse:
    session = sessions.get_for(request.user, session_id, Action.RENAME_SESSION)
    try:
        sessions.do_update(session, title=request.POST.get("title", ""))
    except ValueError as exc:
        messages.error(request, str(exc))
    if request.POST.get("next") == "list":
        return redirect("sessions")
    return redirect("session", session_id=session.id)


@login_required
@require_POST
def session_delete(request: HttpRequest, session_id: str) -> HttpResponse:
    sessions.do_delete(sessions.get_for(request.user, session_id, Action.DELETE_SESSION))
    messages.info(request, "The session, its sandbox and its files were deleted.")
    return redirect("sessions")


@login_required
@require_POST
def session_fork(request: HttpRequest, session_id: str) -> HttpResponse:
    """A copy of the session in the user's own space, with its files and kernel state: what a
    viewer of a workspace does to work on a session they may only read."""
    source = sessions.get_for(request.user, session_id, Action.FORK)
    try:
        fork = forks.do_fork(source=source, owner=request.user)
    except user_limits.LimitReached as exc:
        messages.error(request, str(exc))
        return redirect("session", session_id=source.id)
    return redirect("session", session_id=fork.id)


@login_required
@require_POST
def share_create(request: HttpRequest, session_id: str) -> HttpResponse:
    session = sessions.get_for(request.user, session_id, Action.SHARE)
    shares.do_create(
        session=session,
        allow_downloads=request.POST.get("allow_downloads") == "on",
        allow_fork_state=request.POST.get("allow_fork_state") == "on",
    )
    return redirect("session", session_id=session.id)


@login_required
@require_POST
def share_revoke(request: HttpRequest, session_id: str, link_id: int) -> HttpResponse:
    session = sessions.get_for(request.user, session_id, Action.SHARE)
    shares.do_revoke(session=session, link_id=link_id)
    return redirect("session", session_id=session.id)


def shared_page(request: HttpRequest, token: str) -> HttpResponse:
    link = shares.get_shared(token)
    session = link.session
    base = f"/api/shared/{link.token}"
    app = {
        "mode": "shared",
        "session-id": str(session.id),
        "title": session.title,
        "untitled": titles.UNTITLED,  # the name a question replaces (static/app/title.js)
        "ws-url": f"/ws/shared/{link.token}/",
        "events-url": f"{base}/events",
        "artifact-base": f"{base}/artifacts",
        "files-url": f"{base}/files" if link.allow_downloads else "",
        "models": json.dumps([session.model]),
        "model": session.model,
        "max-upload": "0",
        "model-unavailable": "",
    }
    context = {
        "session": session,
        "app": app,
        "first_read": f"{base}/events{FIRST_READ}",
        "shared": True,
        "link": link,
    }
    return render(request, "analyst/session.html", context)


def shared_static(request: HttpRequest, token: str) -> HttpResponse:
    """The shared session as a static page (the HTML report): what a viewer without scripts reads,
    its tables as HTML, its plotly charts drawn where scripts run. Sandboxed by its own CSP:
    nothing in it runs or loads but the charts' own scripts."""
    link = shares.get_shared(token)
    made = exports.export(link.session, "html")
    response = HttpResponse(made.content, content_type=made.content_type)
    response["Content-Security-Policy"] = exports.report_policy()
    response["X-Content-Type-Options"] = "nosniff"
    return response


@login_required
@require_POST
def shared_fork(request: HttpRequest, token: str) -> HttpResponse:
    link: ShareLink = shares.get_shared(token)
    try:
        fork = forks.do_fork(source=link.session, owner=request.user, **shares.fork_carries(link))
    except user_limits.LimitReached as exc:  # its files would take the forker past their storage
        messages.error(request, str(exc))
        return redirect("shared", token=token)
    return redirect("session", session_id=fork.id)
