"""What Restart and run all runs: the session's analysis, every cell that succeeded, in order, from
the session's start or its last replay. A Restart does not shorten it; a replay's own cells stand
for the cells they copy, so none runs twice; what a replay did not reach, or ran only to be
stopped, stays; what failed when a replay ran it leaves."""

from __future__ import annotations

import json

from analyst.models import Turn
from analyst.realtime import events
from analyst.sessions.exports.transcript import analysis_cells


def cell(session, code: str, *, error: str = "", replay: tuple[int, int] | None = None) -> None:
    mark = {"replay": {"index": replay[0], "of": replay[1], "by": "user"}} if replay else {}
    events.append(session.id, "cell", {"code": code, **mark})
    if error:
        events.append(session.id, "error", {"name": error, "value": "", "traceback": ""})


def restarted(session) -> None:
    events.append(session.id, "notice", {"text": "The kernel was restarted.", "code": "kernel_restarted"})


def analysis(session) -> list[str]:
    return [block.source for block in analysis_cells(session)]


def test_run_all_right_after_a_restart_runs_the_whole_analysis(api, session):
    cell(session, "x = 1")
    cell(session, "oops", error="NameError")
    cell(session, "y = x + 1")
    restarted(session)

    response = api.post(f"/api/sessions/{session.id}/kernel/run-all")

    assert response.status_code == 202, response.content
    plan = json.loads(Turn.objects.get(id=response.json()["turn"]).input)
    assert [c["code"] for c in plan["cells"]] == ["x = 1", "y = x + 1"]


def test_a_replays_cells_stand_for_those_they_copy(session):
    cell(session, "a = 1")
    cell(session, "b = 2")
    restarted(session)
    cell(session, "a = 1", replay=(1, 2))
    cell(session, "b = 2", replay=(2, 2))
    cell(session, "c = 3")
    restarted(session)
    assert analysis(session) == ["a = 1", "b = 2", "c = 3"]


def test_a_replay_stopped_at_an_error_keeps_the_cells_it_did_not_reach(session):
    for code in ("a = 1", "open('once', 'x')", "b = 2", "c = 3"):
        cell(session, code)
    restarted(session)
    cell(session, "a = 1", replay=(1, 4))
    cell(session, "open('once', 'x')", replay=(2, 4), error="FileExistsError")
    cell(session, "d = 4")
    assert analysis(session) == ["a = 1", "b = 2", "c = 3", "d = 4"]


def test_a_replay_stopped_mid_cell_keeps_that_cell(session):
    cell(session, "a = 1")
    cell(session, "slow()")
    restarted(session)
    cell(session, "a = 1", replay=(1, 2))
    cell(session, "slow()", replay=(2, 2), error="KeyboardInterrupt")
    assert analysis(session) == ["a = 1", "slow()"]


def test_the_analysis_starts_again_at_the_last_replay(session):
    """A replay from before a restart stopped shortening the analysis ran only the cells since
    that restart: from it on, those are the analysis."""
    cell(session, "dropped = 1")
    restarted(session)
    cell(session, "kept = 1")
    restarted(session)
    cell(session, "kept = 1", replay=(1, 1))
    restarted(session)
    cell(session, "more = 2")
    assert analysis(session) == ["kept = 1", "more = 2"]


def test_a_replay_on_another_file_in_a_new_session_is_its_analysis(session):
    cell(session, "df = load()", replay=(1, 3))
    cell(session, "df.broken", replay=(2, 3), error="AttributeError")
    restarted(session)
    cell(session, "fixed = 1")
    assert analysis(session) == ["df = load()", "fixed = 1"]


def test_nothing_run_successfully_is_nothing_to_run(api, session):
    cell(session, "oops", error="NameError")
    restarted(session)
    response = api.post(f"/api/sessions/{session.id}/kernel/run-all")
    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith("no cell has run successfully in this session yet")
