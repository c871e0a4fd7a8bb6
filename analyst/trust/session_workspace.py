"""The workspace whose settings (instructions, privacy) a session follows, read as saved now."""

from __future__ import annotations

from django.db.models import Q

from analyst.models import AnalysisSession, Workspace


def current(session: AnalysisSession) -> Workspace:
    """The session's workspace (its own, or with none its owner's personal one), read again: an
    admin may change its settings while a turn runs, and the next request to the model follows."""
    here = (
        Q(id=session.workspace_id) if session.workspace_id is not None else Q(personal_of_id=session.owner_id)
    )
    return Workspace.objects.get(here)
