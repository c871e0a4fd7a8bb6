"""Which session a request may reach: reading it takes any role in its workspace, changing it the
role its action needs (analyst.workspaces.roles)."""

from __future__ import annotations

from django.http import HttpRequest

from analyst.models import AnalysisSession
from analyst.sessions import sessions
from analyst.workspaces.roles import Action

READING = frozenset({"GET", "HEAD", "OPTIONS"})


def session_for(request: HttpRequest, session_id: object, change: Action) -> AnalysisSession:
    """The session a GET reads, or that another method does ``change`` to; Http404 or
    PermissionDenied as sessions.get_for raises them."""
    action = Action.READ if request.method in READING else change
    return sessions.get_for(request.user, session_id, action)
