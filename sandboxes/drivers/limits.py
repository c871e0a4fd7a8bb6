"""Resource quotas for an isolated process: cgroups (v2 or v1) when we may create them, rlimits always."""

from __future__ import annotations

import contextlib
import logging
import os
import resource
import signal
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

CGROUP_ROOT = Path("/sys/fs/cgroup")
GROUP_PREFIX = "sandboxd"
CPU_PERIOD_US = 10_000
# Every group weighs the same: the defaults of each version (cpu.weight, cpu.shares) said out loud.
CPU_WEIGHT_V2 = 100
CPU_SHARES_V1 = 1024


@dataclass(frozen=True)
class Limits:
    memory_bytes: int = 2 << 30
    max_processes: int = 256
    disk_bytes: int = 1 << 30
    open_files: int = 1024
    cpu_cores: float = 1.0  # CPU time per period, in cores (0: no limit); needs the cpu cgroup


class Cgroup:
    """One cgroup per isolated process, in every hierarchy that enforces a limit we need."""

    def __init__(self, paths: list[Path], version: str = "v2") -> None:
        self.paths = paths
        self.version = version
        self.controllers = ["memory", "pids"]

    @classmethod
    def create(cls, limits: Limits) -> Cgroup | None:
        """Make the group and write its limits; None where this machine does not let us."""
        name = f"{GROUP_PREFIX}-{uuid.uuid4().hex[:12]}"
        try:
            if (CGROUP_ROOT / "cgroup.controllers").exists():
                return cls._create_v2(name, limits)
            return cls._create_v1(name, limits)
        except OSError as exc:
            log.warning("cgroups unavailable (%s); falling back to rlimits", exc)
            return None

    @classmethod
    def _create_v2(cls, name: str, limits: Limits) -> Cgroup:
        parent = CGROUP_ROOT / GROUP_PREFIX
        parent.mkdir(exist_ok=True)
        (parent / "cgroup.subtree_control").write_text("+memory +pids")
        path = parent / name
        path.mkdir()
        group = cls([path])
        (path / "memory.max").write_text(str(limits.memory_bytes))
        _write_if_exists(path / "memory.swap.max", "0")
        (path / "pids.max").write_text(str(limits.max_processes))
        try:  # optional: a machine that does not delegate cpu still gets memory and pids limits
            if "cpu" not in (parent / "cgroup.subtree_control").read_text().split():
                (parent / "cgroup.subtree_control").write_text("+cpu")
            quota = "max" if limits.cpu_cores <= 0 else str(round(limits.cpu_cores * CPU_PERIOD_US))
            (path / "cpu.max").write_text(f"{quota} {CPU_PERIOD_US}")
            (path / "cpu.weight").write_text(str(CPU_WEIGHT_V2))
            group.controllers.append("cpu")
        except OSError as exc:
            log.warning("no CPU limit for %s: %s", path, exc)
        return group

    @classmethod
    def _create_v1(cls, name: str, limits: Limits) -> Cgroup:
        memory = CGROUP_ROOT / "memory" / name
        pids = CGROUP_ROOT / "pids" / name
        memory.mkdir()
        group = cls([memory], "v1")
        pids.mkdir()
        group.paths.append(pids)
        (memory / "memory.limit_in_bytes").write_text(str(limits.memory_bytes))
        _write_if_exists(memory / "memory.memsw.limit_in_bytes", str(limits.memory_bytes))
        (pids / "pids.max").write_text(str(limits.max_processes))
        cpu = CGROUP_ROOT / "cpu" / name
        try:  # optional, as under v2
            cpu.mkdir()
            group.paths.append(cpu)
            quota = -1 if limits.cpu_cores <= 0 else round(limits.cpu_cores * CPU_PERIOD_US)
            (cpu / "cpu.cfs_period_us").write_text(str(CPU_PERIOD_US))
            (cpu / "cpu.cfs_quota_us").write_text(str(quota))
            (cpu / "cpu.shares").write_text(str(CPU_SHARES_V1))
            group.controllers.append("cpu")
        except OSError as exc:
            log.warning("no CPU limit for %s: %s", cpu, exc)
        return group

    def join(self) -> None:
        """Move the calling process into the group (called in the child before exec)."""
        pid = str(os.getpid())
        for path in self.paths:
            (path / "cgroup.procs").write_text(pid)

    def kill_all(self) -> None:
        for path in self.paths:
            if _write_if_exists(path / "cgroup.kill", "1"):
                return
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def pids(self) -> set[int]:
        found: set[int] = set()
        for path in self.paths:
            try:
                found.update(int(p) for p in (path / "cgroup.procs").read_text().split())
            except OSError:
                pass
        return found

    def memory_used(self) -> int | None:
        """The bytes its processes use now (memory.current, or v1's memory.usage_in_bytes)."""
        for path in self.paths:
            for name in ("memory.current", "memory.usage_in_bytes"):
                with contextlib.suppress(OSError, ValueError):
                    return int((path / name).read_text())
        return None

    def remove(self, wait_seconds: float = 5.0) -> None:
        """Remove the group once its killed processes are reaped (rmdir fails while any remain)."""
        deadline = time.monotonic() + wait_seconds
        while self.pids() and time.monotonic() < deadline:
            time.sleep(0.02)
        for path in self.paths:
            try:
                path.rmdir()
            except OSError as exc:
                log.warning("cgroup %s not removed: %s", path, exc)


def tree_rss(pid: int, limit: int = 1000) -> int | None:
    """The resident memory of ``pid`` and its descendants (at most ``limit`` processes), in
    bytes; None once ``pid`` is gone. Where there is no cgroup to ask, this is what it uses."""
    page = os.sysconf("SC_PAGE_SIZE")
    total, seen, waiting = 0, 0, [pid]
    while waiting and seen < limit:
        current = waiting.pop()
        seen += 1
        try:
            total += int(Path(f"/proc/{current}/statm").read_text().split()[1]) * page
        except (OSError, ValueError, IndexError):
            if current == pid:
                return None
            continue
        for children in Path(f"/proc/{current}/task").glob("*/children"):
            with contextlib.suppress(OSError, ValueError):
                waiting.extend(int(child) for child in children.read_text().split())
    return total


def _write_if_exists(path: Path, value: str) -> bool:
    try:
        path.write_text(value)
    except (FileNotFoundError, PermissionError, OSError):
        return False
    return True


def child_setup(
    limits: Limits, cgroup: Cgroup | None, uid: int | None = None, gid: int | None = None
) -> Callable[[], None]:
    """A preexec_fn: join the cgroup, set the rlimits that hold without one, then become
    ``uid``/``gid`` (an unprivileged host user) for good when we are root."""

    def setup() -> None:
        os.setsid()
        if cgroup is not None:
            cgroup.join()
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.disk_bytes, limits.disk_bytes))
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
        if cgroup is None:
            resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
            if os.getuid() != 0:
                resource.setrlimit(resource.RLIMIT_NPROC, (limits.max_processes,) * 2)
        if uid is not None and os.getuid() == 0:
            group = uid if gid is None else gid
            os.setgroups([])
            os.setresgid(group, group, group)
            os.setresuid(uid, uid, uid)

    return setup


def probe_cgroups(limits: Limits) -> dict[str, object]:
    """What this machine lets sandboxd enforce, found by making (and removing) one group:
    {"version": "v1" | "v2" | None, "controllers": [...], "problem": "..." where something is missing}."""
    group = Cgroup.create(limits)
    if group is None:
        return {
            "version": None,
            "controllers": [],
            "problem": "cgroups unavailable: memory falls back to an address-space rlimit, "
            "processes to a per-user rlimit, and CPU is not limited",
        }
    group.remove()
    found: dict[str, object] = {"version": group.version, "controllers": list(group.controllers)}
    if "cpu" not in group.controllers:
        found["problem"] = "the cpu cgroup controller is unavailable: CPU is not limited"
    return found
