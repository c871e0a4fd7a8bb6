"""A run's session, and a replay's on another file, keep their source's privacy mode, chart images
and approval setting: a run asked to repair a failing cell calls the model from that session, which
must see no more of the data than the source's would."""

from __future__ import annotations

from analyst.models import AnalysisSession
from analyst.runs import runs
from analyst.sessions import forks
from tests.runs.test_schedules import alice, analysis

__all__ = ["alice", "analysis"]  # the fixtures used here as they are there


def test_a_run_keeps_the_sources_privacy_and_approval(analysis):
    AnalysisSession.objects.filter(id=analysis.id).update(
        privacy="schema", send_chart_images=False, approve_cells="writes"
    )
    analysis.refresh_from_db()
    run = runs.do_start(source=analysis, user=analysis.owner, values={"top": 4}, repair=True)
    made = run.session
    assert (made.privacy, made.send_chart_images, made.approve_cells) == ("schema", False, "writes")
    assert forks.kept_settings(analysis) == {
        "privacy": "schema",
        "send_chart_images": False,
        "approve_cells": "writes",
    }
