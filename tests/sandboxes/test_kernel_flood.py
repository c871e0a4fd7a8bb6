"""sandboxd is bounded against its own kernels: a kernel thread that floods iopub between cells
grows neither sandboxd nor the kernel itself (its publisher keeps a short queue for a reader that
is not reading), rich results and errors are capped per cell with a visible marker, and a message
over the size limit is dropped without hanging its cell."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandboxes import Sandbox
from tests.conftest import TEST_SETTINGS, sandbox_maker
from tests.sandboxd_process import SandboxdProcess, own_sandboxd_process

# Timed against a flood of 3 s: with another test beside it on 2 cores, the flooded kernel's next
# cell found its output still lost (1 run of 3 under make test's two workers).
pytestmark = pytest.mark.serial

MiB = 1 << 20

# A thread that publishes 1 MiB stream messages parented to no cell, for a few seconds.
FLOOD = """
import threading, time
kernel = get_ipython().kernel
payload = "x" * (1 << 20)
def flood(seconds):
    end = time.time() + seconds
    while time.time() < end:
        kernel.session.send(kernel.iopub_socket, "stream", {"name": "stdout", "text": payload}, parent={})
threading.Thread(target=flood, args=(%s,), daemon=True).start()
"""


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.fixture(scope="module")
def small_caps() -> Iterator[SandboxdProcess]:
    """A sandboxd whose results cap (2 MiB) and message limit (4 MiB) are quick to reach."""
    settings = {
        **TEST_SETTINGS,
        "SANDBOXD_RESULTS_LIMIT": "2M",
        "SANDBOXD_MAX_KERNEL_MESSAGE": "4M",
        "SANDBOXD_POOL_SIZE": "0",
    }
    with own_sandboxd_process(settings, prefix="sandboxd-caps-") as server:
        yield server


@pytest.fixture
def capped(small_caps: SandboxdProcess) -> Iterator[Sandbox]:
    sandbox = Sandbox.create(url=small_caps.url, token=small_caps.token)
    yield sandbox
    sandbox.kill()
    sandbox.close()


def flood_between_cells(server: SandboxdProcess, flooding: Sandbox, neighbour: Sandbox) -> None:
    """``flooding`` floods for 3 s between cells, while ``neighbour`` runs cells; sandboxd and the
    flooding kernel each grow by a bounded amount, and the flooded kernel's next cell is whole."""
    assert neighbour.run_code("1 + 1").text == "2"
    pid = server.process.pid
    before, peak, worst = rss_bytes(pid), 0, 0.0
    kernel_before = flooding.get_info().memory_used or 0
    kernel_peak = kernel_before
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak, kernel_peak
        while not stop.is_set():
            peak = max(peak, rss_bytes(pid))
            kernel_peak = max(kernel_peak, flooding.get_info().memory_used or 0)
            time.sleep(0.05)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        # Nobody reads the flooding kernel's iopub until its next cell: its publisher must drop
        # what it cannot queue, not hold a thousand MiB messages (ZeroMQ's default) until its
        # memory limit kills it.
        started = flooding.run_code(FLOOD % 3)
        assert started.error is None, started.error
        deadline = time.monotonic() + 3.5
        while time.monotonic() < deadline:
            started = time.monotonic()
            assert neighbour.run_code("1 + 1").text == "2"
            worst = max(worst, time.monotonic() - started)
    finally:
        stop.set()
        sampler.join()
    print(
        f"sandboxd RSS {before / MiB:.0f} MiB, peak {peak / MiB:.0f} MiB;"
        f" flooding kernel {kernel_before / MiB:.0f} MiB, peak {kernel_peak / MiB:.0f} MiB;"
        f" neighbour's worst {worst:.3f} s"
    )
    assert peak - before < 300 * MiB
    assert kernel_peak - kernel_before < 200 * MiB  # 64 MiB at most wait (ZeroMQ's default: ~350 in 3 s)
    execution = flooding.run_code("6 * 7")  # the flooded sandbox's own next cell: no flood in it
    assert execution.error is None, f"{execution.error.name}: {execution.error.value}"
    assert execution.text == "42" and execution.stdout == ""


def test_a_background_flood_grows_neither_sandboxd_nor_its_kernel(sandboxd, make_sandbox):
    flood_between_cells(sandboxd, make_sandbox(), make_sandbox())


def test_a_flood_after_sandboxd_reconnected_is_bounded_too(small_caps):
    """A message over the size limit makes sandboxd connect to the kernel's iopub anew: the new
    connection gets the kernel's short queue too (a connection takes the limit its socket had when
    it bound, which is why kernel_launcher.py sets it first)."""
    with sandbox_maker(small_caps) as make:
        flooding = make()
        oversized = flooding.run_code("display({'text/plain': 'z' * (8 << 20)}, raw=True)", timeout=30)
        assert "[some of this cell's output was lost" in oversized.stderr
        flood_between_cells(small_caps, flooding, make())


def test_rich_results_are_capped_with_one_marker(capped):
    code = "for i in range(40): display({'text/plain': str(i) + ' ' + 'y' * 100_000}, raw=True)"
    execution = capped.run_code(code)
    texts = [result.text or "" for result in execution.results]
    assert 10 < len(texts) < 40
    assert texts[0].startswith("0 y")
    assert texts[-1].startswith("[results truncated: more than 2097152 bytes")
    assert sum(text.startswith("[results truncated") for text in texts) == 1
    assert capped.run_code("6 * 7").text == "42"


def test_an_error_payload_is_cut_with_a_marker(capped):
    execution = capped.run_code("raise ValueError('v' * 1_000_000)")
    assert execution.error is not None and execution.error.name == "ValueError"
    assert len(execution.error.value) < 70_000
    assert execution.error.value.endswith("[truncated: more than 65536 characters]")
    assert len(execution.error.traceback) < 70_000
    assert capped.run_code("6 * 7").text == "42"


def test_a_message_over_the_size_limit_is_dropped_and_its_cell_ends(capped):
    code = "display({'text/plain': 'z' * (8 << 20)}, raw=True)\nprint('after')"
    execution = capped.run_code(code, timeout=30)
    assert not any((result.text or "").startswith("zzz") for result in execution.results)
    assert execution.error is None
    assert "[some of this cell's output was lost: the kernel sent a message larger than 4194304" in (
        execution.stderr
    )
    assert capped.run_code("6 * 7").text == "42"
