"""A turn past ANALYST_TURN_TIMEOUT ends as failed, saying so, and its cell is stopped."""

from analyst import dispatch
from analyst.models import Turn
from tests.celery_sends import send_with
from tests.fakes.model_server import anthropic_tool_call
from tests.integration.conftest import wait_for
from tests.printed import printed


def test_a_turn_over_its_time_limit_fails_clearly(stack, api, session, monkeypatch):
    # Celery sends a task's limits with the message, so the sender's limits are the ones that hold.
    send_with(monkeypatch, dispatch.RUN_TURN, soft_time_limit=3, time_limit=30)
    stack.script(anthropic_tool_call("run_python", {"code": "import time\ntime.sleep(60)\nlate = True"}))
    api.post(f"/api/sessions/{session.id}/messages", {"content": "Slow"}, "application/json")
    log = wait_for(session, timeout=60)
    assert log[-1]["type"] == "turn_failed"
    assert "time limit" in log[-1]["payload"]["reason"]
    assert Turn.objects.get(session=session).status == Turn.Status.FAILED

    api.post(f"/api/sessions/{session.id}/cells", {"code": "print('late' in dir())"}, "application/json")
    log = wait_for(session, "turn_done", timeout=60)
    assert printed(log) == "False\n", "the cell was stopped"
