"""Stop: the running cell is interrupted, the turn ends as cancelled, the kernel stays usable."""

import time

from analyst import dispatch
from analyst.models import Turn
from tests.celery_sends import record_sends
from tests.fakes.model_server import anthropic_text, anthropic_tool_call
from tests.integration.conftest import wait_for
from tests.printed import printed_in_last_turn

SLOW_CELL = "import time\nprint('started', flush=True)\nfor _ in range(600): time.sleep(0.1)\nkept = 'late'"


def test_cancel_mid_cell(stack, api, session):
    stack.script(anthropic_tool_call("run_python", {"code": SLOW_CELL}))
    api.post(f"/api/sessions/{session.id}/cells", {"code": "kept = 'early'"}, "application/json")
    wait_for(session, "turn_done")
    api.post(f"/api/sessions/{session.id}/messages", {"content": "Take your time"}, "application/json")
    wait_for(session, "stdout")
    started = time.monotonic()

    assert api.post(f"/api/sessions/{session.id}/cancel").status_code == 200

    log = wait_for(session, "turn_cancelled", timeout=30)
    assert time.monotonic() - started < 30
    last_turn = Turn.objects.filter(session=session).latest("id")
    assert last_turn.status == Turn.Status.CANCELLED
    types = [e["type"] for e in log if e["turn"] == last_turn.id]
    assert "turn_done" not in types
    assert any(e["type"] == "error" and e["payload"].get("name") == "KeyboardInterrupt" for e in log)

    api.post(f"/api/sessions/{session.id}/cells", {"code": "print(kept)"}, "application/json")
    log = wait_for(session, "turn_done")
    while [e["type"] for e in log].count("turn_done") < 2:
        log = wait_for(session, "turn_done")
    assert printed_in_last_turn(log) == "early\n"

    stack.script(anthropic_text("Stopped, as asked."))
    api.post(f"/api/sessions/{session.id}/messages", {"content": "And now?"}, "application/json")
    while [e["type"] for e in log].count("turn_done") < 3:
        log = wait_for(session, "turn_done")
    blocks = [b for m in stack.requests[-1].json["messages"] for b in m["content"] if isinstance(b, dict)]
    answered = [b for b in blocks if b["type"] == "tool_result" and b["tool_use_id"] == "toolu_01"]
    assert len(answered) == 1 and answered[0]["is_error"], "the stopped call is answered for the model"


def test_cancel_before_the_worker_starts_it(stack, api, session, monkeypatch):
    record_sends(monkeypatch, dispatch.RUN_TURN)  # never sent: it stays queued
    api.post(f"/api/sessions/{session.id}/messages", {"content": "Hello"}, "application/json")
    assert api.post(f"/api/sessions/{session.id}/cancel").json()["turn"] is not None
    assert Turn.objects.get(session=session).status == Turn.Status.CANCELLED
    assert [e["type"] for e in wait_for(session, "turn_cancelled")] == ["user_message", "turn_cancelled"]
