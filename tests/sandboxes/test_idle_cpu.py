"""Work a cell leaves behind (a process it started, a thread) spun until the sandbox's TTL. Now a
sandbox whose processes use SANDBOXD_IDLE_CPU_SECONDS of CPU within SANDBOXD_IDLE_CPU_WINDOW while
no cell runs is paused: the spinner stops, the variables stay, and the next cell says so first.
A sandbox idle without such work is left alone."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest

from sandboxes import Sandbox
from tests.conftest import TEST_SETTINGS, sandbox_maker, workdir_of
from tests.sandboxd_process import SandboxdProcess, own_sandboxd_process
from tests.sandboxes.gvisor_service import GVISOR_SETTINGS, needs_runsc
from tests.sandboxes.test_pause_and_resume import processes_of

BUDGET = 2  # CPU seconds
WINDOW = 10  # seconds: a spinner held to a share of a loaded core still uses the budget within it
STOPPED_WITHIN = 90  # seconds the test waits for the pause

SPINNERS = {
    "a process": "import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', 'while True: pass'])",
    "a forked process": "import os\nif os.fork() == 0:\n    while True: pass",
    "a thread": (
        "import threading\ndef spin():\n    while True: pass\n"
        "threading.Thread(target=spin, daemon=True).start()"
    ),
}


@pytest.fixture(scope="module")
def watching_sandboxd() -> Iterator[SandboxdProcess]:
    settings = {
        **TEST_SETTINGS,
        "SANDBOXD_IDLE_CPU_SECONDS": str(BUDGET),
        "SANDBOXD_IDLE_CPU_WINDOW": str(WINDOW),
        "SANDBOXD_IDLE_PAUSE": "3600",  # no pause for being idle alone
    }
    with own_sandboxd_process(settings, prefix="sandboxd-idle-cpu-") as process:
        yield process


@pytest.fixture
def make_watched_sandbox(watching_sandboxd: SandboxdProcess) -> Iterator[Callable[[], Sandbox]]:
    with sandbox_maker(watching_sandboxd) as make:
        yield make


@pytest.mark.parametrize("spinner", list(SPINNERS))
def test_work_left_spinning_is_stopped_and_the_next_cell_says_so(
    make_watched_sandbox, watching_sandboxd, spinner
):
    sandbox = make_watched_sandbox()
    assert sandbox.run_code("kept = 41").error is None
    assert sandbox.run_code(SPINNERS[spinner]).error is None  # the cell ends; its work does not
    deadline = time.monotonic() + STOPPED_WITHIN
    while sandbox.get_info().state != "paused":  # get_info does not resume it
        assert time.monotonic() < deadline, f"{spinner} still spins: {watching_sandboxd.read_log()[-2000:]}"
        time.sleep(0.5)
    execution = sandbox.run_code("kept + 1")
    assert execution.text == "42"
    assert "[sandbox]" in execution.stderr and "stopped" in execution.stderr
    assert sandbox.get_info().resumed.why == "cpu"
    assert "[sandbox]" not in sandbox.run_code("kept").stderr  # said once


def test_the_spinning_processes_are_gone(make_watched_sandbox, watching_sandboxd):
    sandbox = make_watched_sandbox()
    uid = workdir_of(watching_sandboxd, sandbox).stat().st_uid
    sandbox.run_code(SPINNERS["a process"])
    deadline = time.monotonic() + STOPPED_WITHIN
    while sandbox.get_info().state != "paused":
        assert time.monotonic() < deadline, "the spinner was never stopped"
        time.sleep(0.5)
    deadline = time.monotonic() + 10
    assert uid != 0
    while processes_of(uid):
        assert time.monotonic() < deadline, f"processes of uid {uid} still run: {processes_of(uid)}"
        time.sleep(0.1)


def test_a_sandbox_idle_without_background_work_is_left_alone(make_watched_sandbox):
    sandbox = make_watched_sandbox()
    assert sandbox.run_code("kept = 41").error is None
    time.sleep(WINDOW + 3)
    assert sandbox.get_info().state == "running"
    execution = sandbox.run_code("kept + 1")
    assert execution.text == "42"
    assert "[sandbox]" not in execution.stderr


@pytest.fixture(scope="module")
def watching_gvisor_sandboxd() -> Iterator[SandboxdProcess]:
    settings = {
        **GVISOR_SETTINGS,
        "SANDBOXD_IDLE_CPU_SECONDS": str(BUDGET),
        "SANDBOXD_IDLE_CPU_WINDOW": str(WINDOW),
        "SANDBOXD_IDLE_PAUSE": "3600",
    }
    with own_sandboxd_process(settings, prefix="sandboxd-idle-cpu-gvisor-", start_timeout=120) as process:
        yield process


@pytest.mark.slow  # the bubblewrap test above is in make test; this twin in make test-slow
@needs_runsc
def test_work_left_spinning_under_gvisor_is_stopped_too(watching_gvisor_sandboxd):
    """Under gVisor the Sentry runs what the sandbox starts: its CPU is the sandbox's."""
    with sandbox_maker(watching_gvisor_sandboxd) as make:
        sandbox = make()
        assert sandbox.run_code("kept = 41").error is None
        assert sandbox.run_code(SPINNERS["a process"]).error is None
        deadline = time.monotonic() + STOPPED_WITHIN
        while sandbox.get_info().state != "paused":
            assert time.monotonic() < deadline, "the spinner still spins under gVisor"
            time.sleep(0.5)
        execution = sandbox.run_code("kept + 1")
        assert execution.text == "42"
        assert "[sandbox]" in execution.stderr
