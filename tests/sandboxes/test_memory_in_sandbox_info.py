"""A sandbox's info says how much memory its kernel uses against its limit, and follows use:
under the default driver and under gVisor, whose figure is its sandbox's memory cgroup's."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sandboxes import Sandbox
from tests.sandboxd_process import SandboxdProcess
from tests.sandboxes.gvisor_service import needs_runsc


def check_memory_follows_use(sandbox: Sandbox) -> None:
    info = sandbox.get_info()
    assert info.memory_limit is not None and info.memory_limit > 0
    assert info.memory_used is not None and 10 << 20 < info.memory_used < info.memory_limit
    sandbox.run_code("import numpy as np\nblock = np.ones(200 << 20, dtype=np.uint8)")
    grown = sandbox.get_info().memory_used
    assert grown is not None and grown > info.memory_used + (150 << 20)


def test_a_sandbox_reports_its_kernels_memory_against_its_limit(sandbox: Sandbox) -> None:
    check_memory_follows_use(sandbox)


@pytest.fixture
def gvisor_sandbox(gvisor_sandboxd: SandboxdProcess) -> Iterator[Sandbox]:
    sandbox = Sandbox.create(url=gvisor_sandboxd.url, token=gvisor_sandboxd.token)
    yield sandbox
    sandbox.kill()
    sandbox.close()


@needs_runsc
def test_under_gvisor_too_and_its_variables_are_read(gvisor_sandbox: Sandbox) -> None:
    check_memory_follows_use(gvisor_sandbox)
    [block] = gvisor_sandbox.default_context.variables()
    assert (block.name, block.shape, block.size) == ("block", [200 << 20], 200 << 20)
