"""Run again on another file where a cell fails: the replay stops there, says so, and asks the
session's model (a question of its own, queued behind the replay) to repair the cell with its
error; the model's fix runs in the same kernel. With no model to ask, it says where it stopped."""

from __future__ import annotations

import time

from analyst.models import AnalysisSession, Turn
from tests.fakes.model_server import anthropic_text, anthropic_tool_call
from tests.integration.conftest import wait_for
from tests.integration.test_resume_and_fork import run_cell
from tests.integration.test_run_again_on_another_file import READ, SALES, uploaded
from tests.printed import printed

SOUTH = "south = int(sales.set_index('region').loc['south', 'amount'])\nprint('south', south)"
AFTER = "print('share', round(south / sales.amount.sum(), 2))"
APRIL = b"region,amount\nnorth,40\neast,60\n"  # no south this month
FIX = "south = int(sales.amount.max())\nprint('south', south)"


def failing_rerun(api, session):
    sales = uploaded(api, session, "sales.csv", SALES)
    for code in (READ, SOUTH, AFTER):
        run_cell(api, session, code)
    april = uploaded(api, session, "april.csv", APRIL)
    response = api.post(
        f"/api/sessions/{session.id}/rerun", {"replace": sales.id, "with": april.id}, "application/json"
    )
    assert response.status_code == 201, response.content
    return AnalysisSession.objects.get(id=response.json()["id"])


def test_the_model_is_asked_to_repair_the_cell_and_its_fix_runs(stack, api, session):
    stack.script(
        anthropic_tool_call("run_python", {"code": FIX}, tool_id="toolu_fix"),
        anthropic_tool_call("run_python", {"code": AFTER}, tool_id="toolu_after"),
        anthropic_text("April has no south: I took the largest region instead."),
    )
    rerun = failing_rerun(api, session)

    deadline = time.monotonic() + 150
    while rerun.events.filter(type__in=["turn_done", "turn_failed"]).count() < 2:  # the replay, the repair
        assert time.monotonic() < deadline, [e.type for e in rerun.events.all()]
        time.sleep(0.1)
    log = wait_for(rerun)
    assert [e["type"] for e in log if e["type"].startswith("turn_")].count("turn_done") == 2
    replay, repair = Turn.objects.filter(session=rerun).order_by("id")
    assert (replay.kind, repair.kind) == (Turn.Kind.REPLAY, Turn.Kind.CHAT)
    stopped = [e["payload"] for e in log if e["payload"].get("code") == "replay_stopped"]
    assert len(stopped) == 1 and stopped[0]["index"] == 2 and "KeyError" in stopped[0]["text"]
    assert [e["payload"]["code"] for e in log if e["type"] == "cell"] == [READ, SOUTH]
    asked = [e["payload"]["text"] for e in log if e["type"] == "user_message"]
    assert len(asked) == 1 and asked[0].startswith("Cell 2 of 3 failed when run on april.csv: KeyError")

    # The model read the replay (each cell and its error, the cell after it) and the question.
    sent = str(stack.requests[0].json["messages"])
    assert "KeyError" in sent and "Cell 2 of 3 failed" in sent and "round(south" in sent
    assert printed(log).endswith("south 60\nshare 0.6\n")


def test_without_a_model_it_says_where_it_stopped(stack, api, session):
    AnalysisSession.objects.filter(id=session.id).update(model="ollama/nobody-listens")
    session.refresh_from_db()
    rerun = failing_rerun(api, session)
    log = wait_for(rerun)
    assert [e["type"] for e in log if e["payload"].get("code") == "repair_unavailable"] == ["notice"]
    stopped = [e["payload"]["text"] for e in log if e["payload"].get("code") == "replay_stopped"]
    assert len(stopped) == 1 and stopped[0].startswith("Stopped at cell 2 of 3")
    assert Turn.objects.filter(session=rerun).count() == 1
    assert stack.requests == []
