"""A sandbox's info says how much memory its kernel uses against its limit, and follows use."""

from __future__ import annotations

from sandboxes import Sandbox


def test_a_sandbox_reports_its_kernels_memory_against_its_limit(sandbox: Sandbox) -> None:
    info = sandbox.get_info()
    assert info.memory_limit is not None and info.memory_limit > 0
    assert info.memory_used is not None and 10 << 20 < info.memory_used < info.memory_limit
    sandbox.run_code("import numpy as np\nblock = np.ones(200 << 20, dtype=np.uint8)")
    grown = sandbox.get_info().memory_used
    assert grown is not None and grown > info.memory_used + (150 << 20)
