"""Stop on a cell that ignores SIGINT: its kernel is restarted within the interrupt grace, the turn
ends as cancelled with the cell's KernelRestarted error, and the session's next cell runs."""

import time

from analyst.models import Turn
from tests.fakes.model_server import anthropic_tool_call
from tests.integration.conftest import wait_for
from tests.printed import printed_in_last_turn

STUBBORN_CELL = (
    "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
    "print('started', flush=True)\nwhile True: pass"
)


def test_stop_ends_a_cell_that_ignores_interrupts(stack, api, session):
    stack.script(anthropic_tool_call("run_python", {"code": STUBBORN_CELL}))
    api.post(f"/api/sessions/{session.id}/messages", {"content": "Spin"}, "application/json")
    wait_for(session, "stdout")
    started = time.monotonic()

    assert api.post(f"/api/sessions/{session.id}/cancel").status_code == 200

    # 60 s, half the 120 s cell timeout the old code waited for (a few seconds are needed).
    log = wait_for(session, "turn_cancelled", timeout=60)
    assert time.monotonic() - started < 60
    assert Turn.objects.filter(session=session).latest("id").status == Turn.Status.CANCELLED
    errors = [e["payload"] for e in log if e["type"] == "error"]
    assert any(e.get("name") == "KernelRestarted" and "restarted" in e["value"] for e in errors), errors

    api.post(f"/api/sessions/{session.id}/cells", {"code": "print(6 * 7)"}, "application/json")
    log = wait_for(session, "turn_done")
    assert printed_in_last_turn(log) == "42\n"
