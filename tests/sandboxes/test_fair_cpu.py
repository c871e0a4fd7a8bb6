"""Fair CPU between bubblewrap sandboxes: each kernel's processes, those a cell leaves running
included, are in a cgroup of its own with the configured CPU quota and the same weight as every
other. Behavioural checks on the cgroup files; the neighbour's round trips are printed only."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from sandboxes.drivers import limits
from sandboxes.drivers.limits import CPU_PERIOD_US, Limits, probe_cgroups
from tests.sandboxes.bwrap_service import CPU_LIMIT, needs_root
from tests.sandboxes.test_escape import host_pids_in, pid_namespace_of, probe, wait_until

CGROUP_ROOT = Path("/sys/fs/cgroup")
SPINNERS = 8
START_SPINNERS = f"""
import subprocess, sys
spinners = [
    subprocess.Popen([sys.executable, '-c', 'while True: pass'], start_new_session=True)
    for _ in range({SPINNERS})
]
observed = [p.pid for p in spinners]
"""


def cpu_group_of(pid: int) -> Path:
    """The folder of the cgroup that holds ``pid`` for the cpu controller (v1 or v2)."""
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "cpu" in controllers.split(","):
            mounted = [CGROUP_ROOT / name for name in ("cpu", "cpu,cpuacct", "cpuacct,cpu")]
            base = next(folder for folder in mounted if (folder / "cpu.shares").exists())
            return base / path.lstrip("/")
        if controllers == "" and (CGROUP_ROOT / "cgroup.controllers").exists():
            return CGROUP_ROOT / path.lstrip("/")
    raise AssertionError(f"process {pid} is in no cpu cgroup")


def members(group: Path) -> set[int]:
    return {int(pid) for name in ("cgroup.procs", "tasks") if (group / name).exists()
            for pid in (group / name).read_text().split()}  # fmt: skip


def quota_and_weight(group: Path) -> tuple[tuple[int, int], int]:
    """((quota µs, period µs), weight), read from whichever version's files the group has."""
    if (group / "cpu.max").exists():
        quota, period = (group / "cpu.max").read_text().split()
        return (int(quota), int(period)), int((group / "cpu.weight").read_text())
    quota = int((group / "cpu.cfs_quota_us").read_text())
    period = int((group / "cpu.cfs_period_us").read_text())
    return (quota, period), int((group / "cpu.shares").read_text())


@needs_root
def test_sandboxd_says_what_cgroups_enforce(bwrap_sandboxd):
    health = httpx.get(f"{bwrap_sandboxd.url}/health").json()
    assert health["cgroups"]["version"] in ("v1", "v2"), health
    assert {"memory", "pids", "cpu"} <= set(health["cgroups"]["controllers"]), health
    assert "problem" not in health["cgroups"], health
    assert f"cgroups {health['cgroups']['version']}:" in bwrap_sandboxd.read_log()


def test_without_cgroups_the_probe_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "CGROUP_ROOT", tmp_path / "absent")
    found = probe_cgroups(Limits())
    assert found["version"] is None and "CPU is not limited" in found["problem"], found


@needs_root
def test_left_behind_spinners_are_bounded_by_their_sandboxs_cpu_quota(make_bwrap_sandbox):
    spinning, neighbour = make_bwrap_sandbox(), make_bwrap_sandbox()
    inside = probe(spinning, START_SPINNERS)  # the cell ends; its spinners go on
    assert len(inside) == SPINNERS

    namespace = pid_namespace_of(spinning)

    def spinner_pids() -> set[int]:
        found = set()
        for pid in host_pids_in(namespace):
            try:
                if b"while True" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.add(pid)
            except OSError:
                pass
        return found

    assert wait_until(lambda: len(spinner_pids()) == SPINNERS), spinner_pids()
    spinners = spinner_pids()
    kernel_groups = {cpu_group_of(pid) for pid in host_pids_in(namespace)}
    assert len(kernel_groups) == 1, kernel_groups  # the kernel and all it started: one group
    [group] = kernel_groups
    assert group.name.startswith("sandboxd-"), group
    assert spinners <= members(group), (spinners, members(group))
    (quota, period), weight = quota_and_weight(group)
    assert (quota, period) == (round(CPU_LIMIT * CPU_PERIOD_US), CPU_PERIOD_US)

    neighbour_groups = {cpu_group_of(pid) for pid in host_pids_in(pid_namespace_of(neighbour))}
    assert len(neighbour_groups) == 1 and group not in neighbour_groups, neighbour_groups
    [other] = neighbour_groups
    assert quota_and_weight(other) == ((quota, period), weight)  # the same share for each

    rounds = []
    for _ in range(20):
        start = time.perf_counter()
        assert neighbour.run_code("1 + 1").text == "2"
        rounds.append(time.perf_counter() - start)
    rounds.sort()
    p50, slowest = rounds[10] * 1000, rounds[-1] * 1000
    print(f"neighbour's 1+1 beside {SPINNERS} spinners: p50 {p50:.1f} ms, slowest {slowest:.1f} ms")

    spinning.kill()
    assert wait_until(lambda: not group.exists()), f"{group} outlived its sandbox"
