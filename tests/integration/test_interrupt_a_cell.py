"""Interrupt: the running cell ends with KeyboardInterrupt and its turn goes on; the model reads
the error as the cell's result and answers (Stop, by contrast, ends the turn)."""

import time

from analyst.models import Turn
from tests.fakes.model_server import anthropic_text, anthropic_tool_call
from tests.integration.conftest import wait_for

SLOW_CELL = "import time\nprint('started', flush=True)\ntime.sleep(60)"


def test_interrupt_keeps_the_model_turn_going(stack, api, session):
    stack.script(
        anthropic_tool_call("run_python", {"code": SLOW_CELL}),
        anthropic_text("That cell was interrupted; here is what I can say anyway."),
    )
    api.post(f"/api/sessions/{session.id}/messages", {"content": "Take your time"}, "application/json")
    wait_for(session, "stdout")
    started = time.monotonic()

    response = api.post(f"/api/sessions/{session.id}/kernel/interrupt")
    assert response.status_code == 200 and response.json() == {"interrupted": True}

    log = wait_for(session, "turn_done", timeout=30)
    assert time.monotonic() - started < 30
    assert Turn.objects.get(session=session).status == Turn.Status.DONE
    assert any(e["type"] == "error" and e["payload"].get("name") == "KeyboardInterrupt" for e in log)
    said = [e["payload"].get("text", "") for e in log if e["type"] == "assistant_message"]
    assert said and said[-1].startswith("That cell was interrupted"), [e["type"] for e in log]
    blocks = [b for m in stack.requests[-1].json["messages"] for b in m["content"] if isinstance(b, dict)]
    [answered] = [b for b in blocks if b["type"] == "tool_result"]
    assert answered["is_error"] and "KeyboardInterrupt" in str(answered["content"])
