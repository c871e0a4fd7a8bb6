"""A new code context takes the kernel its sandbox started ahead after its last new context, and
one left unused for SANDBOXD_CONTEXT_SPARE seconds is stopped, as it is with its sandbox."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandboxes import Sandbox
from tests.conftest import TEST_SETTINGS, sandbox_maker, workdir_of
from tests.sandboxd_process import SandboxdProcess, own_sandboxd_process
from tests.sandboxes.bwrap_service import host_uid_of, needs_root
from tests.sandboxes.test_warm_pool import KERNEL_START

KEEP_SECONDS = 6

pytestmark = needs_root  # counted by the sandbox's own host uid


@pytest.fixture(scope="module")
def server() -> Iterator[SandboxdProcess]:
    # Uids of its own: the other sandboxd processes of this test worker hand out theirs from the
    # bottom of the worker's range, and their kernels would be counted as this one's.
    uids = int(os.environ.get("SANDBOXD_UID_BASE", "61000")) + 1000
    settings = {
        **TEST_SETTINGS,
        "SANDBOXD_CONTEXT_SPARE": str(KEEP_SECONDS),
        "SANDBOXD_UID_BASE": str(uids),
        "SANDBOXD_UID_COUNT": "100",
    }
    with own_sandboxd_process(settings, prefix="sandboxd-spare-") as process:
        yield process


@pytest.fixture
def sandbox(server: SandboxdProcess) -> Iterator[Sandbox]:
    with sandbox_maker(server) as make:
        yield make()


def kernel_started_at(sandbox: Sandbox, context: object) -> float:
    return float(sandbox.run_code("import time" + KERNEL_START, context=context).text)  # type: ignore[arg-type]


def uid_of(server: SandboxdProcess, sandbox: Sandbox) -> int:
    return workdir_of(server, sandbox).stat().st_uid


def processes_of(uid: int) -> int:
    """Host processes running as a sandbox's uid (each kernel is two: its pid 1 and itself)."""
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                count += host_uid_of(int(entry.name)) == uid
            except (FileNotFoundError, ProcessLookupError, AssertionError):
                pass  # ended meanwhile
    return count


def wait_for_processes(uid: int, count: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while (found := processes_of(uid)) != count:
        assert time.monotonic() < deadline, f"{found} processes of the sandbox, not {count}"
        time.sleep(0.1)


def test_a_new_context_takes_the_kernel_started_after_the_last(sandbox):
    first = sandbox.create_code_context()
    sandbox.run_code("x = 1", context=first)
    time.sleep(1)

    for _ in range(2):  # and the next was started ahead again
        asked_at = time.time()
        context = sandbox.create_code_context()
        # The code before started each context's kernel when it was asked for.
        assert kernel_started_at(sandbox, context) < asked_at - 0.5
        seen = sandbox.run_code("print('x' in dir(), os.getcwd())", context=context)
        assert seen.stdout == "False /home/user\n"
        time.sleep(1)
    sandbox.files.write("made.txt", b"seen")
    assert sandbox.run_code("open('made.txt').read()", context=context).text == "'seen'"


def test_one_left_unused_is_stopped_and_so_is_it_with_its_sandbox(server, sandbox):
    uid = uid_of(server, sandbox)
    assert processes_of(uid) == 2  # the default context's kernel alone
    sandbox.create_code_context()

    wait_for_processes(uid, 6, timeout=30)  # two contexts, and one started ahead
    wait_for_processes(uid, 4, timeout=KEEP_SECONDS + 10)

    sandbox.create_code_context()  # its kernel started now, and the next one ahead
    wait_for_processes(uid, 8, timeout=30)
    sandbox.kill()
    wait_for_processes(uid, 0, timeout=10)
