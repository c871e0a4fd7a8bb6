"""A published report's page: the chosen version's report (report.py's, whole), with a masthead
saying which run it is, listing the versions, and what changed in the figures since the one before."""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.safestring import mark_safe

from analyst.models import Publication, Run
from analyst.runs import published_cells, publishing
from analyst.sessions.exports import report, transcript

WHEN = "%Y-%m-%d %H:%M UTC"


def page(publication: Publication, run_id: str | None) -> str:
    """The HTML of the version ``run_id`` names (the latest without one); Http404 for an id
    that is not one of the report's versions."""
    versions = publishing.done_runs(publication.session)
    current, before = publishing.chosen(publication, versions, run_id)
    changes, more = [], 0
    if current.run is not None and before is not None:
        changes, more = published_cells.changes(
            published_cells.indexed(before.session, run=True),
            published_cells.indexed(current.session, run=True),
        )
    context = {
        "run": _version(current.run) if current.run else None,
        "versions": [_version(run) | {"current": run == current.run} for run in versions],
        "token": publication.token,
        "compared": before is not None,
        "changes": changes,
        "more": more,
    }
    masthead = mark_safe(render_to_string("analyst/published/masthead.html", context))  # noqa: S308 (autoescaped template)
    blocks = transcript.read(current.session, superseded=True)
    preface = f"Published from AI data analyst; read on {timezone.now().strftime(WHEN)}."
    return report.report(publication.session.title, blocks, preface, masthead=masthead)


def _version(run: Run) -> dict[str, Any]:
    finished = run.turn.finished_at
    values = ", ".join(f"{name} = {value!r}" for name, value in run.parameters.items())
    return {
        "id": str(run.id),
        "finished_at": finished.strftime(WHEN) if finished else "",
        "parameters": values or "its parameters' defaults",
    }
