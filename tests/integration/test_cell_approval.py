"""Cells a person approves, through the real worker: a model's cell waits as a cell_pending event
until its owner runs it (perhaps edited) or rejects it; the model reads what happened; a wait
nobody answers ends the turn; the "writes" mode lets a cell that only reads run at once."""

from __future__ import annotations

import json
from typing import Any

from analyst.models import AnalysisSession, Turn
from tests.fakes.model_server import anthropic_text, anthropic_tool_call
from tests.integration.conftest import wait_for
from tests.printed import printed

JSON = "application/json"
WRITING = "open('total.txt', 'w').write(str(total))"


def ask(api, session, question="Save the totals"):
    response = api.post(f"/api/sessions/{session.id}/messages", {"content": question}, JSON)
    assert response.status_code == 202, response.content


def decide(api, session, action, body=None, tool_call_id="toolu_01"):
    url = f"/api/sessions/{session.id}/pending/{tool_call_id}/{action}"
    return api.post(url, json.dumps(body or {}), JSON)


def approving(session: AnalysisSession, mode: str = "all") -> AnalysisSession:
    AnalysisSession.objects.filter(id=session.id).update(approve_cells=mode)
    return session


def tool_result(request, tool_call_id="toolu_01") -> dict[str, Any]:
    blocks = [b for m in request.json["messages"] for b in m["content"] if isinstance(b, dict)]
    (found,) = [b for b in blocks if b["type"] == "tool_result" and b["tool_use_id"] == tool_call_id]
    return found


def text_of(block: dict[str, Any]) -> str:
    return "\n".join(part["text"] for part in block["content"] if part["type"] == "text")


def types(log):
    return [e["type"] for e in log]


def test_a_cell_waits_then_runs_when_approved(stack, api, session):
    approving(session)
    stack.script(anthropic_tool_call("run_python", {"code": "print(6 * 7)"}), anthropic_text("It is 42."))
    ask(api, session)
    log = wait_for(session, "cell_pending")
    pending = log[-1]["payload"]
    assert (pending["tool_call_id"], pending["code"]) == ("toolu_01", "print(6 * 7)")
    assert "tool_call" not in types(log)
    assert len(stack.requests) == 1, "the turn waits: the model is not asked again meanwhile"

    assert decide(api, session, "approve").status_code == 200
    log = wait_for(session, "turn_done")
    assert types(log).index("cell_pending") < types(log).index("cell_decided") < types(log).index("tool_call")
    assert printed(log) == "42\n"
    result = tool_result(stack.requests[1])
    assert text_of(result).splitlines()[-1] == "42" and not result["is_error"]
    assert decide(api, session, "approve").status_code == 409, "decided once"


def test_an_edited_cell_runs_instead_and_the_model_is_told(stack, api, session):
    approving(session)
    stack.script(anthropic_tool_call("run_python", {"code": "print('mine')"}), anthropic_text("Done."))
    ask(api, session)
    wait_for(session, "cell_pending")

    assert decide(api, session, "approve", {"code": "print('edited')"}).status_code == 200
    log = wait_for(session, "turn_done")
    (call,) = [e for e in log if e["type"] == "tool_call"]
    assert call["payload"]["code"] == "print('edited')"
    assert printed(log) == "edited\n"
    told = text_of(tool_result(stack.requests[1]))
    assert "The user edited this cell before it ran; this code ran instead of yours:" in told
    assert "print('edited')" in told and told.rstrip().endswith("edited")


def test_a_rejected_cell_never_runs_and_the_model_reads_why(stack, api, session):
    approving(session)
    stack.script(
        anthropic_tool_call("run_python", {"code": "import os\nos.remove('data/sales.csv')\nprint('gone')"}),
        anthropic_text("I will not delete it."),
    )
    ask(api, session, "Clean up")
    wait_for(session, "cell_pending")

    assert decide(api, session, "reject", {"reason": "keep the raw data"}).status_code == 200
    log = wait_for(session, "turn_done")
    assert "tool_call" not in types(log) and printed(log) == ""
    decided = [e["payload"] for e in log if e["type"] == "cell_decided"]
    assert decided == [{"tool_call_id": "toolu_01", "pending": decided[0]["pending"], "decision": "rejected",
                        "reason": "keep the raw data"}]  # fmt: skip
    result = tool_result(stack.requests[1])
    assert text_of(result) == "The user rejected this cell: keep the raw data It did not run."
    assert result["is_error"]
    assert Turn.objects.get(session=session).status == Turn.Status.DONE


def test_a_cell_nobody_decides_on_ends_the_turn(stack, api, session, extra_worker, monkeypatch):
    extra_worker(ANALYST_APPROVAL_TIMEOUT="2")
    approving(session)
    stack.script(anthropic_tool_call("run_python", {"code": "print('late')"}))
    ask(api, session)
    log = wait_for(session, "turn_done", "turn_failed", timeout=60)
    assert types(log)[-1] == "turn_done"
    (problem,) = [e["payload"] for e in log if e["type"] == "error"]
    assert problem["code"] == "approval_expired"
    assert (
        "did not run" in problem["message"] and "2 seconds (ANALYST_APPROVAL_TIMEOUT)" in problem["message"]
    )
    assert [e["payload"]["decision"] for e in log if e["type"] == "cell_decided"] == ["expired"]
    assert "tool_call" not in types(log) and printed(log) == ""
    assert len(stack.requests) == 1
    refused = decide(api, session, "approve")
    assert refused.status_code == 409 and "expired" in refused.json()["error"]["message"]


def test_writes_mode_runs_a_reading_cell_at_once_and_holds_a_writing_one(stack, api, session):
    approving(session, "writes")
    stack.script(
        anthropic_tool_call("run_python", {"code": "total = 6 * 7\nprint(total)"}),
        anthropic_tool_call(
            "run_python", {"code": "open('total.txt', 'w').write(str(total))"}, tool_id="toolu_02"
        ),
        anthropic_text("Saved."),
    )
    ask(api, session)
    log = wait_for(session, "cell_pending")
    assert printed(log) == "42\n", "the reading cell ran without waiting"
    (pending,) = [e["payload"] for e in log if e["type"] == "cell_pending"]
    assert pending["tool_call_id"] == "toolu_02"
    assert pending["why"] == ["line 1: open('total.txt', 'w').write(…)", "line 1: open(…) in a writing mode"]

    assert decide(api, session, "approve", tool_call_id="toolu_02").status_code == 200
    log = wait_for(session, "turn_done")
    assert [e["payload"]["id"] for e in log if e["type"] == "tool_call"] == ["toolu_01", "toolu_02"]
    assert text_of(tool_result(stack.requests[2], "toolu_02")).splitlines()[-1] == "2"


def test_stop_ends_a_waiting_turn(stack, api, session, monkeypatch):
    approving(session)
    stack.script(anthropic_tool_call("run_python", {"code": "print('never')"}))
    ask(api, session)
    wait_for(session, "cell_pending")
    assert api.post(f"/api/sessions/{session.id}/cancel").status_code == 200
    log = wait_for(session, "turn_cancelled", timeout=30)
    assert "tool_call" not in types(log)
    assert decide(api, session, "approve").status_code == 409


def test_the_turns_time_limit_ends_a_wait_before_it_kills_the_turn(stack, api, session, extra_worker):
    # Its wait would last 10 minutes; the turn's limit (13 s, less a margin to end in words) comes first.
    extra_worker(ANALYST_APPROVAL_TIMEOUT="600", ANALYST_TURN_TIMEOUT="13")
    approving(session)
    stack.script(anthropic_tool_call("run_python", {"code": "print('late')"}))
    ask(api, session)
    log = wait_for(session, "turn_done", "turn_failed", timeout=60)
    assert types(log)[-1] == "turn_done", "ended by the wait, not killed by the time limit"
    (problem,) = [e["payload"] for e in log if e["type"] == "error"]
    assert problem["code"] == "approval_expired"
    assert "before the turn reached its time limit (ANALYST_TURN_TIMEOUT)" in problem["message"]
