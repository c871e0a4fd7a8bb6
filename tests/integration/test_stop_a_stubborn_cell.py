"""Stop on a cell that ignores SIGINT: its kernel is restarted within the interrupt grace, and then
brought back from the session's latest snapshot; the turn ends as cancelled with the cell's
KernelRestarted error, the user is told what came back, and the session's next cell runs."""

import time

from analyst.models import Turn
from tests.fakes.model_server import anthropic_tool_call
from tests.integration.conftest import wait_for
from tests.integration.test_resume_and_fork import run_cell
from tests.printed import printed_in_last_turn

STUBBORN_CELL = (
    "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
    "print('started', flush=True)\nwhile True: pass"
)


def test_stop_ends_a_cell_that_ignores_interrupts_and_brings_the_state_back(stack, api, session):
    run_cell(api, session, "kept = 9")  # saved as the session's state after its turn
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
    # The old code left the restarted kernel empty, and said only that.
    restored = [e["payload"]["text"] for e in log if e["type"] == "kernel_restored"]
    assert len(restored) == 1 and "ignored the interrupt" in restored[0], restored
    assert "were restored" in restored[0]

    log = run_cell(api, session, "print(kept * 7)")
    assert printed_in_last_turn(log) == "63\n"


def test_a_stop_the_web_process_could_not_deliver_is_heard_by_the_worker(stack, api, session):
    """Stop came while the turn made its kernel (a new session's first cell), so only the turn's
    row says it: the worker hears it and interrupts the cell (its kernel restarted: it ignores it)."""
    api.post(f"/api/sessions/{session.id}/cells", {"code": STUBBORN_CELL}, "application/json")
    wait_for(session, "stdout")

    Turn.objects.filter(session=session, status=Turn.Status.RUNNING).update(cancel_requested=True)

    # The code before ran the cell on to its timeout (60 s here), then ended the turn.
    log = wait_for(session, "turn_cancelled", timeout=40)
    errors = [e["payload"] for e in log if e["type"] == "error"]
    assert any(e.get("name") == "KernelRestarted" for e in errors), errors
