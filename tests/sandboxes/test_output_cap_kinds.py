"""Every kind of a cell's output is capped in bytes with the default limits, not only stdout: 60
displays of 500 KB delivered 30 MiB and one exception message 1 MiB; now results and errors stop
at the results limit with a marker and a count of what was dropped, an error's texts at 64 KiB."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandboxes import Sandbox
from sandboxes.server.config import ServerConfig
from tests.conftest import TEST_SETTINGS, sandbox_maker
from tests.sandboxd_process import SandboxdProcess, own_sandboxd_process

MiB = 1 << 20


@pytest.fixture(scope="module")
def default_caps() -> Iterator[SandboxdProcess]:
    """A sandboxd with the default output caps, said here since a machine's .env may pin others."""
    caps = {
        "SANDBOXD_STDOUT_LIMIT": "1M",
        "SANDBOXD_RESULTS_LIMIT": "16M",
        "SANDBOXD_MAX_KERNEL_MESSAGE": "8M",
    }
    with own_sandboxd_process(
        {**TEST_SETTINGS, **caps, "SANDBOXD_POOL_SIZE": "0"}, prefix="sandboxd-caps-"
    ) as server:
        yield server


@pytest.fixture
def sandbox(default_caps: SandboxdProcess) -> Iterator[Sandbox]:
    with sandbox_maker(default_caps) as make:
        yield make()


def test_the_default_results_limit_is_a_few_messages():
    config = ServerConfig(token="t", templates_dir=Path("/nonexistent"), data_dir=Path("/nonexistent"))
    assert config.results_limit_bytes == 16 * MiB


def test_displays_past_the_results_limit_are_dropped_and_counted(sandbox):
    execution = sandbox.run_code(
        "for i in range(60): display({'text/plain': str(i) + ' ' + 'y' * 500_000}, raw=True)"
    )
    texts = [result.text or "" for result in execution.results]
    assert 20 < len(texts) < 40
    assert texts[-1] == "[results truncated: more than 16777216 bytes of results and errors in this cell]"
    kept = len(texts) - 1
    assert sum(len(text) for text in texts[:-1]) <= 16 * MiB
    # The count is of what reached sandboxd: a burst may also lose some on the way, and not always
    # said (the kernel's ZeroMQ publisher drops, unsaid, what a slow reader leaves past its queue:
    # seen on a loaded machine, three test workers on two cores).
    counted = re.search(
        r"^\[sandbox\] (\d+) results and errors of this cell \(\d+ bytes\) were dropped"
        r" over its limit of 16777216 bytes\n\Z",
        execution.stderr,
        re.MULTILINE,
    )
    assert counted is not None, execution.stderr
    assert 0 < int(counted.group(1)) <= 60 - kept
    assert sandbox.run_code("6 * 7").text == "42"


def test_an_exception_message_is_cut_at_64_kib(sandbox):
    execution = sandbox.run_code("raise ValueError('v' * 1_000_000)")
    assert execution.error is not None and execution.error.name == "ValueError"
    assert execution.error.value == "v" * 65536 + "\n[truncated: more than 65536 characters]"
    assert len(execution.error.traceback) < 70_000
    assert execution.stderr == ""
