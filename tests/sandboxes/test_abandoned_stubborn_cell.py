"""A cell whose caller left and that ignores the interrupt: its kernel is restarted, and the next
cell runs at once and says so (it queued behind the spinning cell until its own timeout)."""

import pytest

STUBBORN = (
    "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
    "x = 1\nprint('started', flush=True)\nwhile True: pass"
)


class CallerLeft(Exception):
    pass


def leave(text: str) -> None:
    raise CallerLeft(text)


def test_the_next_cell_runs_after_an_abandoned_cell_that_ignores_interrupts(sandbox):
    with pytest.raises(CallerLeft):
        sandbox.run_code(STUBBORN, on_stdout=leave)

    execution = sandbox.run_code("6 * 7", timeout=20)

    assert execution.error is None, execution.error
    assert execution.text == "42"
    assert "did not stop when interrupted, so the kernel was restarted" in execution.stderr
    assert sandbox.run_code("x").error.name == "NameError"
    assert "restarted" not in sandbox.run_code("1").stderr, "said once"
