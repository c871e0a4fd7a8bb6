"""The CPU an idle sandbox burns (no cell running, no request served), and when it is too much.

A cell may leave work behind: a process it started (``subprocess.Popen``, ``os.fork``) or a
thread, spinning until the sandbox's TTL. What a sandbox's processes have used is read from
/proc, for each kernel's whole process tree: each process's own CPU time and that of the children
it reaped (an orphan's init reaps it inside the sandbox), so work that ends and starts again is
counted as well. Past ``budget`` CPU seconds within ``window`` seconds of idleness it is over.
"""

from __future__ import annotations

import contextlib
import os
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")
MAX_PROCESSES = 1000  # looked at in one tree (a sandbox may run at most its process limit)


def tree_cpu_seconds(pid: int, limit: int = MAX_PROCESSES) -> float | None:
    """CPU seconds ``pid`` and its descendants used, with the children they reaped; None once
    ``pid`` is gone."""
    total, seen, waiting = 0.0, 0, [pid]
    while waiting and seen < limit:
        current = waiting.pop()
        seen += 1
        used = _cpu_seconds(current)
        if used is None:
            if current == pid:
                return None
            continue
        total += used
        for children in Path(f"/proc/{current}/task").glob("*/children"):
            with contextlib.suppress(OSError, ValueError):
                waiting.extend(int(child) for child in children.read_text().split())
    return total


def _cpu_seconds(pid: int) -> float | None:
    """utime + stime + cutime + cstime of ``pid`` (/proc/<pid>/stat, after its name, which may
    hold spaces and parentheses)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()
    try:  # fields 14 to 17 of proc(5), counted from the state (field 3) here
        return sum(int(value) for value in fields[11:15]) / TICKS
    except (ValueError, IndexError):
        return None


@dataclass
class _Samples:
    since: float  # the sandbox's last_used when these began: a use starts them again
    taken: deque[tuple[float, float]] = field(default_factory=deque)  # (when, CPU seconds)


class IdleCpuMeter:
    """Samples of each idle sandbox's CPU time; says when one used ``budget`` seconds of it
    within ``window`` seconds (a budget of 0 or less: never)."""

    def __init__(self, *, budget: float, window: float) -> None:
        self.budget = budget
        self.window = window
        self._samples: dict[str, _Samples] = {}

    def used(self, sandbox_id: str, *, last_used: float, now: float, cpu: float) -> float:
        """Record ``cpu`` (the sandbox's CPU seconds so far) at ``now``; the CPU seconds it used
        within the window, since it was last used."""
        samples = self._samples.get(sandbox_id)
        if samples is None or samples.since != last_used:
            samples = self._samples[sandbox_id] = _Samples(last_used)
        taken = samples.taken
        if taken and cpu < taken[-1][1]:  # a process left the tree unreaped by it: start again
            taken.clear()
        taken.append((now, cpu))
        while len(taken) > 1 and taken[1][0] <= now - self.window:
            taken.popleft()
        return cpu - taken[0][1]

    def over(self, used: float) -> bool:
        return self.budget > 0 and used >= self.budget

    def forget(self, sandbox_id: str) -> None:
        """It is in use, or gone: its idle time starts again."""
        self._samples.pop(sandbox_id, None)

    def forget_all_but(self, sandbox_ids: set[str]) -> None:
        for gone in set(self._samples) - sandbox_ids:
            del self._samples[gone]
