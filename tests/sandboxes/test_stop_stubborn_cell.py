"""Stop and Restart end a cell that ignores SIGINT within the interrupt grace, by restarting its kernel."""

import threading
import time

import pytest

from tests.conftest import TEST_SETTINGS, sandbox_maker
from tests.sandboxd_process import own_sandboxd_process
from tests.sandboxes.gvisor_service import needs_runsc

# Each ignores the interrupt: a Python busy loop, and a C wait (a thread join) with SIGINT ignored.
STUBBORN = {
    "busy loop": (
        "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "print('started', flush=True)\nwhile True: pass"
    ),
    "thread join": (
        "import signal, threading, time; signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "t = threading.Thread(target=time.sleep, args=(600,)); t.start()\n"
        "print('started', flush=True); t.join()"
    ),
}


def run_in_background(context, code):
    """Run ``code`` on ``context`` in a thread; (the thread, an Event set once it printed, results)."""
    started, results = threading.Event(), []

    def on_stdout(text):
        if "started" in text:
            started.set()

    def run():
        results.append(context.run_code(code, on_stdout=on_stdout, timeout=120))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert started.wait(60), "the cell did not start"
    return thread, results


@pytest.mark.parametrize("code", STUBBORN.values(), ids=STUBBORN.keys())
def test_stop_restarts_a_kernel_whose_cell_ignores_interrupts(sandbox, code):
    sandbox.files.write("kept.txt", "on disk")
    context = sandbox.default_context
    context.run_code("x = 1")
    thread, results = run_in_background(context, code)

    # 120 s cell timeout: before, the cell ran on until it, and interrupt() answered only True.
    assert context.interrupt() is True
    thread.join(30)

    assert not thread.is_alive(), "the cell still runs after Stop"
    (execution,) = results
    assert execution.error is not None
    assert execution.error.name == "KernelRestarted"
    assert "restarted" in execution.error.value
    assert context.run_code("x").error.name == "NameError", "the kernel was restarted, empty"
    assert context.run_code("open('kept.txt').read()").text == "'on disk'"


def test_restart_during_a_stubborn_cell_ends_it(sandbox):
    context = sandbox.default_context
    context.run_code("x = 1")
    thread, results = run_in_background(context, STUBBORN["busy loop"])

    context.restart()
    thread.join(30)

    assert not thread.is_alive(), "the cell still runs after Restart"
    assert results[0].error.name == "KernelRestarted"
    assert context.run_code("x").error.name == "NameError"
    assert context.run_code("6 * 7").text == "42"


def test_two_stops_at_once_end_the_cell_once(sandbox):
    """Two Stops of one stubborn cell (the page's, and the worker's when it heard Stop too): the
    second waits for the first. Before, both killed the kernel, the second the one restarting, and
    the cell ended with 'execution failed: the kernel process killed'."""
    context = sandbox.default_context
    thread, results = run_in_background(context, STUBBORN["busy loop"])
    answers: list[bool] = []
    stops = [threading.Thread(target=lambda: answers.append(context.interrupt())) for _ in range(2)]
    for stop in stops:
        stop.start()
        time.sleep(0.2)  # the second's grace ends while the first's kill restarts the kernel
    for stop in stops:
        stop.join(60)
    thread.join(30)

    assert answers == [True, True]
    (execution,) = results
    assert execution.error is not None and execution.error.name == "KernelRestarted", execution.error
    assert context.run_code("6 * 7").text == "42"


def test_interrupt_of_an_obedient_cell_keeps_state(sandbox):
    context = sandbox.default_context
    context.run_code("x = 1")
    thread, results = run_in_background(context, "print('started', flush=True)\nwhile True: pass")

    assert context.interrupt() is True
    thread.join(30)

    assert results[0].error.name == "KeyboardInterrupt"
    assert context.run_code("x").text == "1", "an interrupt that works keeps the state"


@pytest.mark.slow  # the bubblewrap test above is in make test; this twin in make test-slow
@needs_runsc
def test_stop_restarts_a_stubborn_cells_kernel_under_gvisor(gvisor_sandboxd):
    with sandbox_maker(gvisor_sandboxd) as make:
        context = make().default_context
        context.run_code("x = 1")
        thread, results = run_in_background(context, STUBBORN["busy loop"])

        assert context.interrupt() is True
        thread.join(60)

        assert not thread.is_alive(), "the cell still runs after Stop"
        assert results[0].error.name == "KernelRestarted"
        assert context.run_code("x").error.name == "NameError"
        assert context.run_code("6 * 7").text == "42"


def test_the_interrupt_grace_is_a_setting():
    settings = {**TEST_SETTINGS, "SANDBOXD_INTERRUPT_GRACE": "1.5"}
    with (
        own_sandboxd_process(settings, prefix="sandboxd-grace-test-") as process,
        sandbox_maker(process) as make,
    ):
        context = make().default_context
        thread, results = run_in_background(context, STUBBORN["busy loop"])

        assert context.interrupt() is True
        thread.join(30)

        assert results[0].error.name == "KernelRestarted"
        assert "did not end within 1.5 s of its interrupt" in results[0].error.value
