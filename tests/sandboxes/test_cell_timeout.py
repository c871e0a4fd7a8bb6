"""A cell past its timeout is interrupted (state kept), or the kernel restarted if it won't stop."""

import threading
import time

from sandboxes import ContextBusy


def test_timeout_interrupts_and_keeps_state(sandbox):
    sandbox.run_code("kept = 7")
    execution = sandbox.run_code("import time\nwhile True: time.sleep(0.05)", timeout=1)
    assert execution.error.name == "TimeoutError"
    assert "interrupted" in execution.error.value
    assert "State is kept" in execution.error.value
    assert sandbox.run_code("kept").text == "7"


def test_a_cell_that_ignores_interrupts_restarts_the_kernel(sandbox):
    sandbox.run_code("kept = 7")
    code = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: pass"
    execution = sandbox.run_code(code, timeout=1)
    assert execution.error.name == "TimeoutError"
    assert "restarted" in execution.error.value
    assert sandbox.run_code("kept").error.name == "NameError"
    assert sandbox.run_code("1 + 1").text == "2"


def test_interrupt_stops_a_running_cell(sandbox):
    outcome = {}

    def run() -> None:
        outcome["execution"] = sandbox.run_code("import time\nfor _ in range(600): time.sleep(0.1)")

    worker = threading.Thread(target=run)
    worker.start()
    deadline = time.monotonic() + 30
    while not sandbox.get_info() or not _busy(sandbox):
        assert time.monotonic() < deadline, "the cell never started"
        time.sleep(0.05)
    assert sandbox.default_context.interrupt() is True
    worker.join(timeout=30)
    assert outcome["execution"].error.name == "KeyboardInterrupt"


def test_a_second_cell_while_one_runs_is_refused(sandbox):
    worker = threading.Thread(target=sandbox.run_code, args=("import time; time.sleep(3)",))
    worker.start()
    deadline = time.monotonic() + 30
    while not _busy(sandbox):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    try:
        sandbox.run_code("1")
    except ContextBusy:
        pass
    else:
        raise AssertionError("a second cell ran concurrently in one kernel")
    worker.join(timeout=30)


def _busy(sandbox) -> bool:
    sandbox.get_info()
    response = sandbox._api.request("GET", f"/sandboxes/{sandbox.sandbox_id}").json()
    return any(c["busy"] for c in response["contexts"])


def test_an_interrupt_that_lands_before_the_cell_listens_is_sent_again(sandbox):
    """ipykernel ignores SIGINT until its cell executes, so an interrupt sent just as the cell was
    sent is lost; Stop sends it again within the grace instead of restarting the kernel at once.
    This cell ignores SIGINT for its first 1.5 s, as the kernel does before a cell starts."""
    sandbox.run_code("kept = 7")
    outcome = {}
    code = (
        "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(1.5)\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\nfor _ in range(600): time.sleep(0.1)"
    )
    worker = threading.Thread(target=lambda: outcome.setdefault("execution", sandbox.run_code(code)))
    worker.start()
    deadline = time.monotonic() + 30
    while not _busy(sandbox):
        assert time.monotonic() < deadline, "the cell never started"
        time.sleep(0.05)
    assert sandbox.default_context.interrupt() is True
    worker.join(timeout=30)
    assert outcome["execution"].error.name == "KeyboardInterrupt"
    assert sandbox.run_code("kept").text == "7", "the kernel was not restarted"
