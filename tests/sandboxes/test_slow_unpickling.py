"""A restore is bounded in time (SANDBOXD_RESTORE_LIMIT): a variable whose unpickling sleeps (its
class's ``__setstate__``, defined in the kernel) held a fork's first cell for minutes, until the
600 s state timeout. Now it is stopped and left out, named in the restore report (and a resume's
``unsaved``), and the other variables, two names for one list among them, come back whole."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from sandboxes import Sandbox
from tests.conftest import TEST_SETTINGS, sandbox_maker
from tests.sandboxd_process import SandboxdProcess, own_sandboxd_process
from tests.sandboxes.gvisor_service import GVISOR_SETTINGS, needs_runsc

# Longer than the suite's 300 s timeout: a restore that waits for it fails the test.
SLOW_STATE = """
class Slow:
    def __setstate__(self, state):
        import time

        try:
            time.sleep(3600)
        except BaseException:  # keeps the first alarm from stopping it: the next one must
            time.sleep(3600)

slow = Slow()
slow.x = 1
numbers = [1, 2, 3]
same = numbers
after = "after"
"""


@pytest.fixture(scope="module")
def bounded_sandboxd() -> Iterator[SandboxdProcess]:
    settings = {**TEST_SETTINGS, "SANDBOXD_RESTORE_LIMIT": "2"}
    with own_sandboxd_process(settings, prefix="sandboxd-restore-limit-") as process:
        yield process


@pytest.fixture
def make_bounded_sandbox(bounded_sandboxd: SandboxdProcess) -> Iterator[Callable[[], Sandbox]]:
    with sandbox_maker(bounded_sandboxd) as make:
        yield make


def holding_slow_state(make: Callable[[], Sandbox]) -> Sandbox:
    sandbox = make()
    assert sandbox.run_code(SLOW_STATE).error is None
    return sandbox


def assert_rest_is_back(sandbox: Sandbox) -> None:
    assert sandbox.run_code("slow").error.name == "NameError"
    assert sandbox.run_code("(numbers, same is numbers, after, Slow.__name__)").text == (
        "([1, 2, 3], True, 'after', 'Slow')"
    )
    assert sandbox.run_code("6 * 7").text == "42"


def test_a_fork_leaves_out_what_unpickles_too_slowly(make_bounded_sandbox):
    source = holding_slow_state(make_bounded_sandbox)
    forked = source.fork()
    try:
        (context,) = forked.restore_report.contexts
        assert context.unsaved == ["slow"]
        assert "slow" not in context.restored
        assert {"Slow", "numbers", "same", "after"} <= set(context.restored)
        assert_rest_is_back(forked)
        assert source.run_code("slow.x").text == "1"  # the source keeps it
    finally:
        forked.kill()
        forked.close()


def test_a_resume_names_what_unpickled_too_slowly(make_bounded_sandbox):
    sandbox = holding_slow_state(make_bounded_sandbox)
    sandbox.pause()
    assert sandbox.run_code("after").text == "'after'"  # resumes it
    resumed = sandbox.get_info().resumed
    assert resumed is not None and resumed.unsaved == ["slow"]
    assert_rest_is_back(sandbox)


def test_a_restore_from_a_snapshot_is_bounded_too(make_bounded_sandbox, bounded_sandboxd):
    snapshot = holding_slow_state(make_bounded_sandbox).snapshot()
    restored = Sandbox.restore(snapshot.snapshot_id, url=bounded_sandboxd.url, token=bounded_sandboxd.token)
    try:
        assert restored.restore_report.unsaved == ["slow"]
        assert_rest_is_back(restored)
    finally:
        restored.kill()
        restored.close()
        Sandbox.delete_snapshot(snapshot.snapshot_id, url=bounded_sandboxd.url, token=bounded_sandboxd.token)


@pytest.mark.slow  # the bubblewrap test above is in make test; this twin in make test-slow
@needs_runsc
def test_a_fork_under_gvisor_is_bounded_too():
    settings = {**GVISOR_SETTINGS, "SANDBOXD_RESTORE_LIMIT": "2"}
    with (
        own_sandboxd_process(settings, prefix="sandboxd-restore-limit-gvisor-", start_timeout=120) as process,
        sandbox_maker(process) as make,
    ):
        forked = holding_slow_state(make).fork()
        try:
            assert forked.restore_report.unsaved == ["slow"]
            assert_rest_is_back(forked)
        finally:
            forked.kill()
            forked.close()
