"""Settings and helpers of the tests that run sandboxd under gVisor: which host processes are a
sandbox's (its kernels' Sentries and what they start), found from runsc's own bundles."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from sandboxes import Sandbox
from sandboxes.drivers.limits import CGROUP_ROOT, GROUP_PREFIX
from tests.conftest import TEST_SETTINGS

GVISOR_SETTINGS = {**TEST_SETTINGS, "SANDBOXD_DRIVER": "gvisor", "SANDBOXD_POOL_SIZE": "2"}

needs_runsc = pytest.mark.skipif(
    shutil.which("runsc") is None or os.geteuid() != 0,
    reason="gVisor needs runsc (apt-get install runsc; make setup installs it as root) and root",
)


def containers_of(sandbox: Sandbox) -> list[str]:
    """The runsc containers running ``sandbox``'s kernels: those whose bundle binds its workdir."""
    found = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError, ValueError):
            argv = (entry / "cmdline").read_bytes().decode().rstrip("\0").split("\0")
            if "run" not in argv or "--bundle" not in argv:
                continue
            bundle = Path(argv[argv.index("--bundle") + 1])
            config = json.loads((bundle / "config.json").read_text())
            if any(Path(mount["source"]).name == sandbox.sandbox_id for mount in config["mounts"]):
                found.append(argv[-1])
    return sorted(set(found))


def container_pids(container: str) -> list[int]:
    """Host pids in the container's cgroup (the Sentry, its stubs): none once it is gone."""
    group = f"{GROUP_PREFIX}-{container}"
    for folder in (CGROUP_ROOT / "memory" / group, CGROUP_ROOT / group):  # cgroup v1, v2
        with contextlib.suppress(OSError):
            return [int(pid) for pid in (folder / "cgroup.procs").read_text().split()]
    return []


def kernel_processes(sandbox: Sandbox) -> Callable[[], list[int]]:
    """A callable giving the host pids of the kernels ``sandbox`` runs now, as long as they live."""
    containers = containers_of(sandbox)
    assert containers, f"no runsc container runs sandbox {sandbox.sandbox_id}"
    return lambda: [pid for container in containers for pid in container_pids(container)]
