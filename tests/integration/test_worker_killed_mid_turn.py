"""A worker killed mid-turn: the turn ends as failed, with an event saying so, and never runs twice."""

from analyst.models import Turn
from tests.fakes.model_server import anthropic_text, anthropic_tool_call
from tests.integration.conftest import LEASE_SECONDS, wait_for


def test_killed_worker_fails_the_turn_once(stack, api, session, extra_worker):
    first = extra_worker()
    cell = "import time\nprint('working', flush=True)\ntime.sleep(120)"
    stack.script(anthropic_tool_call("run_python", {"code": cell}))
    api.post(f"/api/sessions/{session.id}/messages", {"content": "Work"}, "application/json")
    wait_for(session, "stdout")

    first.kill()
    extra_worker()  # a replacement starts: it ends what its predecessor left running

    log = wait_for(session, "turn_failed", timeout=LEASE_SECONDS * 10 + 30)
    turn = Turn.objects.get(session=session)
    assert turn.status == Turn.Status.FAILED
    assert "stopped" in turn.error
    assert [e["type"] for e in log].count("turn_started") == 1
    assert "turn_done" not in [e["type"] for e in log]

    stack.script(anthropic_text("Back again."))
    api.post(f"/api/sessions/{session.id}/messages", {"content": "Again?"}, "application/json")
    log = wait_for(session, "turn_done")
    assert log[-1]["type"] == "turn_done"
