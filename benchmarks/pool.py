"""The warm pool under sustained arrivals: one new sandbox a second for a minute, each timed from
its create request to its first ``1+1`` result, with the adaptive pool (SANDBOXD_POOL_SIZE 2,
growing to SANDBOXD_POOL_MAX 8) beside two baselines measured in the same run: a fixed pool of 2
(the old sizing), and the adaptive pool of kernels bubblewrap starts (not forked from a zygote
that imported everything, so each refill imports after it starts).

Run from the project root: ``.venv/bin/python benchmarks/pool.py`` (``--quick``: 20 arrivals).
Arrivals do not wait for one another or for the pool: each starts on the second, in its own
thread, and every sandbox stays open (a session) until the phase ends. Prints a Markdown table
and writes it to benchmarks/results/pool.md; every process it starts is stopped on exit.
"""

from __future__ import annotations

import contextlib
import statistics
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from benchmarks import harness  # noqa: E402
from benchmarks.harness import load_average, step  # noqa: E402
from sandboxes import Sandbox, SandboxError  # noqa: E402
from tests.sandboxd_process import SandboxdProcess  # noqa: E402

QUICK = "--quick" in sys.argv[1:]
ARRIVALS = 20 if QUICK else 60
INTERVAL = 1.0  # seconds between arrivals
POOL_SIZE = 2
POOL_MAX = 8
TARGET_MS = 150.0
TIME_BUDGET = 900


@dataclass
class Phase:
    name: str
    latencies_ms: list[float]
    failures: list[str]
    largest_pool: int

    def pct(self, q: float) -> float:
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")

    @property
    def p50(self) -> float:
        return statistics.median(self.latencies_ms) if self.latencies_ms else float("nan")

    def fast(self) -> int:
        return sum(ms <= TARGET_MS for ms in self.latencies_ms)


def sandboxd(
    folder: Path, pool_max: int, *, forked: bool = True
) -> contextlib.AbstractContextManager[SandboxdProcess]:
    settings = {
        "SANDBOXD_POOL_SIZE": str(POOL_SIZE),
        "SANDBOXD_POOL_MAX": str(pool_max),
        "SANDBOXD_MAX_SANDBOXES": str(ARRIVALS + 10),
        "SANDBOXD_DEFAULT_TTL": "900",
        "SANDBOXD_FORK_SERVER": "true" if forked else "false",
    }
    return harness.sandboxd(folder, settings)


def pool_ready(server: SandboxdProcess) -> int:
    headers = {"Authorization": f"Bearer {server.token}"}
    stats = httpx.get(f"{server.url}/stats", headers=headers, timeout=10).json()
    return sum(stats["pool"]["ready"].values())


def wait_for_full_pool(server: SandboxdProcess) -> None:
    deadline = time.monotonic() + 120
    while pool_ready(server) < POOL_SIZE:
        if time.monotonic() > deadline:
            raise RuntimeError("the pool never filled")
        time.sleep(0.2)
    time.sleep(2)  # the last kernel's warm-up settles


def run_phase(name: str, server: SandboxdProcess) -> Phase:
    wait_for_full_pool(server)
    latencies: list[float] = []
    failures: list[str] = []
    opened: list[Sandbox] = []
    lock = threading.Lock()
    largest = [pool_ready(server)]

    def arrive() -> None:
        started = time.perf_counter()
        try:
            sandbox = Sandbox.create(url=server.url, token=server.token, request_timeout=120)
            result = sandbox.run_code("1+1", timeout=60).text
        except SandboxError as exc:
            with lock:
                failures.append(f"{type(exc).__name__}: {exc}")
            return
        elapsed = (time.perf_counter() - started) * 1000
        with lock:
            opened.append(sandbox)
            if result == "2":
                latencies.append(elapsed)
            else:
                failures.append(f"1+1 gave {result!r}")

    step(f"{name}: {ARRIVALS} arrivals, one every {INTERVAL:g} s (load {load_average()})")
    threads = []
    begin = time.monotonic()
    for i in range(ARRIVALS):
        delay = begin + i * INTERVAL - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        thread = threading.Thread(target=arrive, daemon=True)
        thread.start()
        threads.append(thread)
        largest[0] = max(largest[0], pool_ready(server))
    for thread in threads:
        thread.join(timeout=180)
    for sandbox in opened:
        with contextlib.suppress(SandboxError):
            sandbox.kill()
        sandbox.close()
    return Phase(name, latencies, failures, largest[0])


def report(folder: Path, load_at_start: str) -> str:
    with sandboxd(folder / "adaptive", POOL_MAX) as server:
        adaptive = run_phase(f"the adaptive pool ({POOL_SIZE} to {POOL_MAX})", server)
    with sandboxd(folder / "fixed", POOL_SIZE) as server:
        fixed = run_phase(f"a fixed pool of {POOL_SIZE}", server)
    with sandboxd(folder / "started", POOL_MAX, forked=False) as server:
        started = run_phase("the adaptive pool of kernels bubblewrap starts", server)
    phases = (adaptive, fixed, started)

    def row(what: str, values: list[str], target: str = "", result: str = "") -> str:
        return f"| {what} | {' | '.join(values)} | {target} | {result} |"

    def verdict(value: float) -> str:
        return "pass" if value <= TARGET_MS else "**FAIL**"

    p90s = [phase.pct(0.9) for phase in phases]
    lines = [
        f"One new sandbox every {INTERVAL:g} s for {ARRIVALS} arrivals, each kept open; create request →"
        " first `1+1` result (load average at start: " + load_at_start + f", at end: {load_average()}).",
        "Kernels are forked from their template's zygote, which imported the warm-up, but in the last"
        " column (baselines: the fixed pool, the old sizing; bubblewrap's own starts, each kernel"
        " importing everything after it starts, as where sandboxd is not root).",
        "",
        f"| Measure | Adaptive pool ({POOL_SIZE}–{POOL_MAX}) | Fixed pool of {POOL_SIZE}"
        " | Adaptive, kernels started by bubblewrap | Target | Result |",
        "|---|---|---|---|---|---|",
        row("p50", [f"{p.p50:.1f} ms" for p in phases], f"≤ {TARGET_MS:g} ms", verdict(adaptive.p50)),
        row("p90", [f"{value:.1f} ms" for value in p90s], f"≤ {TARGET_MS:g} ms", verdict(p90s[0])),
        row("max", [f"{max(p.latencies_ms, default=0):.1f} ms" for p in phases]),
        row(f"Arrivals answered within {TARGET_MS:g} ms", [f"{p.fast()} of {ARRIVALS}" for p in phases]),
        row("Most kernels ready in the pool at an arrival", [str(p.largest_pool) for p in phases]),
        row("Failed arrivals", [str(len(p.failures)) for p in phases]),
    ]
    for phase in phases:
        for failure in phase.failures[:5]:
            lines.append(f"\n{phase.name}: {failure}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(harness.run("pool", TIME_BUDGET, report))
