"""How many warm kernels the pool keeps: at least its size, more while it is being drained (as
many as arrive while one kernel warms up, and one more), back down when it has been idle.

With a fixed pool of 2, new sessions arriving faster than one every ~1.5 s emptied it, and a
"pooled" create then took a cold kernel's 0.8–1.7 s."""

from __future__ import annotations

import collections
import math
import time
from pathlib import Path

DEMAND_WINDOW = 30.0  # seconds of takes the arrival rate is measured over
MEMINFO = Path("/proc/meminfo")


class PoolSizing:
    def __init__(self, *, minimum: int, maximum: int, idle_seconds: float, clock=time.monotonic) -> None:
        self.minimum = minimum
        self.maximum = max(minimum, maximum)
        self.idle_seconds = idle_seconds
        self.clock = clock
        self.takes: collections.deque[float] = collections.deque()
        self.misses = 0  # takes that found no kernel ready since the pool last had one spare
        self.warm_seconds = 2.0  # how long one kernel takes to warm up (kept up to date)

    def took(self, *, found: bool) -> None:
        self.takes.append(self.clock())
        self.misses = 0 if found else self.misses + 1

    def warmed(self, seconds: float) -> None:
        self.warm_seconds = 0.7 * self.warm_seconds + 0.3 * seconds

    def rate(self) -> float:
        """Takes per second over the last DEMAND_WINDOW."""
        now = self.clock()
        while self.takes and self.takes[0] < now - DEMAND_WINDOW:
            self.takes.popleft()
        return len(self.takes) / DEMAND_WINDOW

    def idle(self) -> bool:
        return not self.takes or self.clock() - self.takes[-1] >= self.idle_seconds

    def target(self) -> int:
        """Kernels to keep ready now."""
        if self.idle():
            return self.minimum
        rate = self.rate()
        needed = math.ceil(rate * self.warm_seconds) + 1 + self.misses
        return max(self.minimum, min(self.maximum, needed))

    def parallel(self) -> int:
        """Kernels to warm at once: two while arrivals outpace one warm-up at a time."""
        if self.idle():
            return 1
        return 2 if self.rate() * self.warm_seconds > 1 or self.misses else 1


def memory_available() -> int:
    """The host's MemAvailable in bytes (0 when it cannot be read)."""
    try:
        for line in MEMINFO.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0
