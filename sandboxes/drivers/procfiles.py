"""Files placed over /proc and /sys inside a sandbox, so that what a kernel reads there is its own.

Libraries size their caches and worker pools from /proc/meminfo and the CPU count (glibc counts
/sys/devices/system/cpu/online, else /proc/stat); the host's would tell a 1 GiB, one-core sandbox
that it has the whole machine. And the host's kernel command line, build, boot id, disks and
load would tell every sandbox which machine it shares. So the view is written once, when the
sandbox starts, as a sandbox that uses nothing yet: its memory limit as RAM, its CPU quota
(rounded up, at most the host's) as its CPUs, a load of 0, no disks, and no host identifier. It
does not follow use.

The host's boot time stays (/proc/uptime, btime in /proc/stat): every process's start time in
/proc/<pid>/stat is counted from it, which no file placed here can change, and psutil and the
like add the two up to date a process. The folders of /sys not placed here are absent (neither
driver mounts a sysfs).
"""

from __future__ import annotations

import math
import os
import uuid
from pathlib import Path

HOST_MEMINFO = Path("/proc/meminfo")
HOST_CPUINFO = Path("/proc/cpuinfo")
HOST_STAT = Path("/proc/stat")
# Sizes that are not amounts of memory in use, kept as the host has them.
KEPT = frozenset({"Hugepagesize", "VmallocTotal"})
# Host files no library needs that count the host's CPUs, memory zones or modules: placed empty.
EMPTIED = (
    "/proc/interrupts",
    "/proc/softirqs",
    "/proc/schedstat",
    "/proc/zoneinfo",
    "/proc/buddyinfo",
    "/proc/modules",
    "/proc/sys/kernel/version",
)
# What glibc's CPU count reads first (sysconf(_SC_NPROCESSORS_ONLN), os.cpu_count()).
CPU_LISTS = tuple(f"/sys/devices/system/cpu/{name}" for name in ("online", "possible", "present"))


def views(memory_bytes: int, cpu_cores: float) -> dict[str, str]:
    """Every placed file, by where the sandbox sees it: its memory limit, ``cpu_cores`` (0: no
    CPU limit) and the rest written now. /proc files the host lacks are left out (a bind needs
    one to cover)."""
    cpus = cpu_count(cpu_cores)
    placed = {
        "/proc/meminfo": meminfo(memory_bytes),
        "/proc/cpuinfo": cpuinfo(cpus),
        "/proc/stat": stat(cpus, host_boot_time()),
        "/proc/loadavg": "0.00 0.00 0.00 1/1 1\n",
        "/proc/cmdline": "\n",
        "/proc/version": f"Linux version {os.uname().release} (sandbox) #1 SMP\n",
        "/proc/sys/kernel/random/boot_id": f"{uuid.uuid4()}\n",
        "/proc/partitions": "major minor  #blocks  name\n\n",
        "/proc/diskstats": "",
        "/proc/swaps": "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n",
        **dict.fromkeys(EMPTIED, ""),
    }
    placed = {path: content for path, content in placed.items() if os.path.exists(path)}
    online = "0\n" if cpus == 1 else f"0-{cpus - 1}\n"
    return {**placed, **dict.fromkeys(CPU_LISTS, online)}


def cpu_count(cpu_cores: float, host: int | None = None) -> int:
    """The CPUs a sandbox is shown: its quota rounded up, at most the host's (all without a quota)."""
    host = host or os.cpu_count() or 1
    return host if cpu_cores <= 0 else max(1, min(host, math.ceil(cpu_cores)))


def meminfo(limit_bytes: int, host: str | None = None) -> str:
    """The host's /proc/meminfo, its fields in their order, with the sandbox's figures."""
    text = HOST_MEMINFO.read_text() if host is None else host
    limit_kb = limit_bytes // 1024
    fields: list[tuple[str, int | str]] = []
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        number, _, unit = rest.strip().partition(" ")
        if unit == "kB" and number.isdigit():
            fields.append((name, int(number)))
        else:
            fields.append((name, rest.strip()))  # counts, such as HugePages_Total
    host_kb = {name: value for name, value in fields if isinstance(value, int)}
    free_kb = min(limit_kb, host_kb.get("MemAvailable", limit_kb))
    sandbox_kb = {"MemTotal": limit_kb, "MemFree": free_kb, "MemAvailable": free_kb, "CommitLimit": limit_kb}
    lines = []
    for name, value in fields:
        if isinstance(value, int):
            shown = sandbox_kb.get(name, value if name in KEPT else 0)
            lines.append(f"{name + ':':<16}{shown:>8} kB")
        else:
            lines.append(f"{name + ':':<16}{'0' if name.startswith('HugePages') else value:>8}")
    return "\n".join(lines) + "\n"


def cpuinfo(cpus: int, host: str | None = None) -> str:
    """The host's first processor (its model and flags, which code picks instructions by),
    ``cpus`` times over as the cores of one package."""
    text = HOST_CPUINFO.read_text() if host is None else host
    first = text.strip().split("\n\n")[0].splitlines()
    numbered = {"processor", "core id", "apicid", "initial apicid"}
    blocks = []
    for index in range(cpus):
        lines = []
        for line in first:
            name, colon, _ = line.partition(":")
            key = name.strip()
            if colon and key in numbered:
                lines.append(f"{name}: {index}")
            elif colon and key in {"siblings", "cpu cores"}:
                lines.append(f"{name}: {cpus}")
            elif colon and key == "physical id":
                lines.append(f"{name}: 0")
            else:
                lines.append(line)
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n\n"


def host_boot_time(host: str | None = None) -> int:
    """The host's boot time (btime in /proc/stat), in seconds since the epoch."""
    text = HOST_STAT.read_text() if host is None else host
    return next(int(line.split()[1]) for line in text.splitlines() if line.startswith("btime "))


def stat(cpus: int, boot_time: int) -> str:
    """/proc/stat of a machine of ``cpus`` idle CPUs that booted at ``boot_time``."""
    times = " 0" * 10
    lines = [f"cpu {times}", *(f"cpu{index}{times}" for index in range(cpus))]
    lines += ["intr 0", "ctxt 0", f"btime {boot_time}", "processes 1", "procs_running 1", "procs_blocked 0"]
    return "\n".join(lines) + "\n"
