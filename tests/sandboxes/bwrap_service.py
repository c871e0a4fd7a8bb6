"""Settings and helpers of the tests of what the bubblewrap driver itself does (host uids, cgroups,
the /proc views), against a sandboxd under bubblewrap (the fixtures in conftest.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import TEST_SETTINGS

CPU_LIMIT = 0.5  # cores per sandbox: not the default, so a test sees that the setting is applied
BWRAP_SETTINGS = {
    **TEST_SETTINGS,
    "SANDBOXD_DRIVER": "bwrap",
    # bubblewrap's own launches (what a sandboxd that is not root runs); forked kernels are the
    # default sandboxd's (test_fork_server.py compares the two).
    "SANDBOXD_FORK_SERVER": "false",
    "SANDBOXD_POOL_SIZE": "1",
    "SANDBOXD_CPU_LIMIT": str(CPU_LIMIT),
}

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="host uids and cgroups need sandboxd as root")


def host_uid_of(pid: int) -> int:
    """The real uid of a host process, as /proc/<pid>/status says."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    raise AssertionError(f"no Uid line for {pid}")
