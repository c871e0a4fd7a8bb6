"""What sandboxd holds of a kernel's messages is bounded in bytes, not only in messages: a thread
that publishes messages of 7 MiB between cells grows sandboxd by a few of them (with a queue of 32
messages of up to 64 MiB, 64 MiB messages grew it from 90 MiB to 1.6 GiB), one message of many
frames, each under the limit, counts whole (libzmq checks its limit per frame: 48 frames of 1 MiB
grew sandboxd by hundreds of MiB), and one over the size limit costs the next cell nothing: its
output comes whole, after a line that says what was dropped."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandboxes import Sandbox
from sandboxes.kernels.kernel import ChannelLimits
from sandboxes.server.config import ServerConfig
from tests.conftest import TEST_SETTINGS, sandbox_maker
from tests.sandboxd_process import SandboxdProcess, own_sandboxd_process
from tests.sandboxes.test_kernel_flood import rss_bytes

# Sampled against a flood: another test beside it on 2 cores would share the CPU it is timed by.
pytestmark = pytest.mark.serial

MiB = 1 << 20

# For 3 s, messages of 7 MiB (under the default size limit of 8 MiB) parented to no cell; the
# flag file says the thread is done.
FLOOD = """
import threading, time
kernel = get_ipython().kernel
def flood():
    under = "x" * (7 << 20)
    end = time.time() + 3
    while time.time() < end:
        kernel.session.send(kernel.iopub_socket, "stream", {"name": "stdout", "text": under}, parent={})
    open("flood-done", "w").close()
threading.Thread(target=flood, daemon=True).start()
"""
# Once this cell is over, one message of 12 MiB (over the limit) parented to no cell. Its queue
# is empty then, so the kernel's publisher sends it rather than dropping it for want of room.
OVERSIZED = """
import threading, time
kernel = get_ipython().kernel
def oversized():
    over = "y" * (12 << 20)
    time.sleep(0.5)
    kernel.session.send(kernel.iopub_socket, "stream", {"name": "stdout", "text": over}, parent={})
    open("oversized-sent", "w").close()
threading.Thread(target=oversized, daemon=True).start()
"""
# For 3 s, messages of 48 frames of 1 MiB (the same buffer, sent without a copy) parented to no
# cell.
MANY_FRAMES_FLOOD = """
import threading, time
kernel = get_ipython().kernel
def flood():
    frame = memoryview(b"f" * (1 << 20))
    end = time.time() + 3
    while time.time() < end:
        kernel.session.send(
            kernel.iopub_socket, "display_data", {"data": {"text/plain": "big"}, "metadata": {}},
            parent={}, buffers=[frame] * 48,
        )
    open("flood-done", "w").close()
threading.Thread(target=flood, daemon=True).start()
"""
# A result of 12 frames of 1 MiB, this cell's own, then output after it.
MANY_FRAMES_RESULT = """
kernel = get_ipython().kernel
frame = memoryview(b"f" * (1 << 20))
kernel.session.send(
    kernel.iopub_socket, "display_data", {"data": {"text/plain": "big"}, "metadata": {}},
    parent=kernel.get_parent(), buffers=[frame] * 12,
)
print("after")
"""
LOST_IN_CELL = (
    "\n[some of this cell's output was lost: the kernel sent a message larger than 8388608 bytes,"
    " or sent faster than it could be read]\n"
)
DROPPED = (
    "[sandbox] output sent since the last cell was dropped: the kernel sent a message larger than"
    " 8388608 bytes\n"
)


@pytest.fixture(scope="module")
def default_limits() -> Iterator[SandboxdProcess]:
    """A sandboxd with the default message limits, said here since a machine's .env may pin
    others (and no pool, so it holds one kernel)."""
    limits = {"SANDBOXD_MAX_KERNEL_MESSAGE": "8M", "SANDBOXD_KERNEL_QUEUE": "2"}
    settings = {**TEST_SETTINGS, **limits, "SANDBOXD_POOL_SIZE": "0"}
    with own_sandboxd_process(settings, prefix="sandboxd-bytes-") as server:
        yield server


@pytest.fixture
def sandbox(default_limits: SandboxdProcess) -> Iterator[Sandbox]:
    with sandbox_maker(default_limits) as make:
        yield make()


def wait_for_file(sandbox: Sandbox, name: str, *, sample: int = 0) -> int:
    """Until the kernel's thread leaves ``name`` in the workdir; the peak RSS of pid ``sample``."""
    deadline, peak = time.monotonic() + 30, 0
    while name not in [entry.name for entry in sandbox.files.list(".")]:
        peak = max(peak, rss_bytes(sample)) if sample else 0
        assert time.monotonic() < deadline, f"no {name}"
        time.sleep(0.05)
    return peak


def test_a_flood_of_large_messages_grows_sandboxd_by_a_few_of_them(default_limits, sandbox):
    assert sandbox.run_code("1 + 1").text == "2"
    before = rss_bytes(default_limits.process.pid)
    assert sandbox.run_code(FLOOD).error is None
    peak = wait_for_file(sandbox, "flood-done", sample=default_limits.process.pid)
    print(f"sandboxd RSS {before / MiB:.0f} MiB, peak {peak / MiB:.0f} MiB")
    assert peak - before < 64 * MiB  # (2 + 2) x 8 MiB at most in ZeroMQ's queue, and the rest
    after = sandbox.run_code("print('next'); 6 * 7", timeout=30)
    assert after.error is None, after.error
    assert (after.stdout, after.text) == ("next\n", "42"), after.stderr


def test_a_flood_of_messages_of_many_frames_grows_sandboxd_by_a_few_messages(default_limits, sandbox):
    assert sandbox.run_code("1 + 1").text == "2"
    pid = default_limits.process.pid
    before, peak, done = rss_bytes(pid), 0, threading.Event()

    def sample() -> None:  # from the flood's own cell on: its output is read while it runs
        nonlocal peak
        while not done.is_set():
            peak = max(peak, rss_bytes(pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        flood = sandbox.run_code(MANY_FRAMES_FLOOD, timeout=30)
        assert flood.error is None, flood.error
        wait_for_file(sandbox, "flood-done")
    finally:
        done.set()
        sampler.join()
    print(f"sandboxd RSS {before / MiB:.0f} MiB, peak {peak / MiB:.0f} MiB")
    assert peak - before < 64 * MiB  # 48 MiB messages, every one over the limit: none is held
    after = sandbox.run_code("print('next'); 6 * 7", timeout=30)
    assert after.error is None, after.error
    assert (after.stdout, after.text) == ("next\n", "42")
    # The thread's first message may come before its own cell's idle status: then that cell is
    # told its output was lost (the relay ended the connection, its idle status with it), and the
    # next cell only if the flood went on after. Drops are said by the cell they happened in.
    assert flood.stderr in ("", LOST_IN_CELL), flood.stderr
    assert after.stderr in ("", DROPPED), after.stderr
    assert flood.stderr or after.stderr, "the drops were not said"


def test_a_result_of_many_frames_over_the_limit_is_dropped_and_the_cell_goes_on(sandbox):
    execution = sandbox.run_code(MANY_FRAMES_RESULT, timeout=30)
    assert execution.error is None, execution.error
    assert [result.text for result in execution.results] == []
    assert execution.stdout == "after\n"
    assert "[some of this cell's output was lost: the kernel sent a message larger than 8388608" in (
        execution.stderr
    )
    assert sandbox.run_code("6 * 7").text == "42"


def test_a_message_over_the_limit_between_cells_costs_the_next_cell_nothing(sandbox):
    assert sandbox.run_code(OVERSIZED).error is None
    wait_for_file(sandbox, "oversized-sent")
    time.sleep(0.5)  # the message reaches sandboxd, which ends the connection
    after = sandbox.run_code("print('next'); 6 * 7", timeout=30)
    assert after.error is None, after.error
    assert (after.stdout, after.text, after.stderr) == ("next\n", "42", DROPPED)
    again = sandbox.run_code("print('again')")
    assert (again.stdout, again.stderr) == ("again\n", "")


def test_sandboxd_holds_a_few_mib_per_kernel_socket_by_default():
    limits = ChannelLimits()
    assert (limits.queue + 2) * limits.max_message_bytes <= 32 * MiB
    config = ServerConfig(token="t", templates_dir=Path("/nonexistent"), data_dir=Path("/nonexistent"))
    assert (config.kernel_queue, config.max_kernel_message_bytes) == (limits.queue, limits.max_message_bytes)
