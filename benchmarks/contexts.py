"""A new code context in a sandbox that is already running (``sandbox.create_code_context()``, how
the app describes each upload), timed from its create request to its first ``1+1`` result, beside
two baselines measured in the same run: the same without a kernel started ahead
(SANDBOXD_CONTEXT_SPARE=0, every context's kernel started when asked for), and a new sandbox from
the warm pool, timed the same way.

Run from the project root: ``.venv/bin/python benchmarks/contexts.py`` (``--quick``: 10 of each).
One request every 1.5 s, each waiting for the one before (as one user's uploads do); each context
is closed once timed. Prints a Markdown table and writes it to benchmarks/results/contexts.md.
"""

from __future__ import annotations

import contextlib
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import harness  # noqa: E402
from benchmarks.harness import load_average, step  # noqa: E402
from sandboxes import Sandbox  # noqa: E402
from tests.sandboxd_process import SandboxdProcess  # noqa: E402

QUICK = "--quick" in sys.argv[1:]
REQUESTS = 10 if QUICK else 30
INTERVAL = 1.5  # seconds from one request's start to the next
TARGET_MS = 50.0
SPARE_SECONDS = 120  # the default
TIME_BUDGET = 600


def sandboxd(folder: Path, spare_seconds: int) -> contextlib.AbstractContextManager[SandboxdProcess]:
    return harness.sandboxd(folder, {"SANDBOXD_CONTEXT_SPARE": str(spare_seconds)})


def timed(name: str, attempt: Callable[[], Callable[[], None]]) -> list[float]:
    """``attempt`` made REQUESTS times, one every INTERVAL s; its durations in ms. Each returns
    what cleans up after it, called once it is timed."""
    step(f"{name}: {REQUESTS} requests, one every {INTERVAL:g} s (load {load_average()})")
    durations = []
    for _ in range(REQUESTS):
        started = time.perf_counter()
        clean_up = attempt()
        durations.append((time.perf_counter() - started) * 1000)
        clean_up()
        time.sleep(max(0.0, started + INTERVAL - time.perf_counter()))
    return durations


def contexts_and_sandboxes(server: SandboxdProcess) -> tuple[list[float], list[float]]:
    """New code contexts in one running sandbox, then new sandboxes from the pool: their times."""
    connect = {"url": server.url, "token": server.token}
    opened: list[Sandbox] = []

    def pooled_sandbox() -> Callable[[], None]:
        sandbox = Sandbox.create(**connect)
        assert sandbox.run_code("1+1", timeout=60).text == "2"
        opened.append(sandbox)  # killed at the end, as the pool refills meanwhile
        return lambda: None

    with Sandbox.create(**connect) as sandbox:
        sandbox.run_code("1+1", timeout=60)
        time.sleep(3)  # the pool refills behind the sandbox just taken

        def new_context() -> Callable[[], None]:
            context = sandbox.create_code_context()
            assert sandbox.run_code("1+1", context=context, timeout=60).text == "2"
            return context.close

        contexts = timed("new code contexts in a running sandbox", new_context)
        pooled = timed("new sandboxes from the warm pool", pooled_sandbox)
    for sandbox in opened:
        sandbox.kill()
        sandbox.close()
    return contexts, pooled


def report(folder: Path, load_at_start: str) -> str:
    with sandboxd(folder / "ahead", SPARE_SECONDS) as server:
        contexts, pooled = contexts_and_sandboxes(server)
    with sandboxd(folder / "none-ahead", 0) as server:
        started, _ = contexts_and_sandboxes(server)

    def pct(values: list[float], q: float) -> float:
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    columns = (contexts, started, pooled)
    p50 = statistics.median(contexts)
    verdict = "pass" if p50 <= TARGET_MS else "**FAIL**"
    lines = [
        f"{REQUESTS} requests of each, one every {INTERVAL:g} s; request → first `1+1` result, under the"
        f" default isolation driver (load average at start: {load_at_start}, at end: {load_average()}).",
        "The first new context in a sandbox finds no kernel started ahead: it is in the figures.",
        "",
        f"| Measure | New code context (`SANDBOXD_CONTEXT_SPARE={SPARE_SECONDS}`) | Baseline: no kernel"
        " started ahead (`0`) | New sandbox from the warm pool | Target | Result |",
        "|---|---|---|---|---|---|",
        f"| p50 | {' | '.join(f'{statistics.median(c):.1f} ms' for c in columns)} | ≤ {TARGET_MS:g} ms"
        f" | {verdict} |",
        f"| p90 | {' | '.join(f'{pct(c, 0.9):.1f} ms' for c in columns)} | | |",
        f"| first | {' | '.join(f'{c[0]:.1f} ms' for c in columns)} | | |",
        f"| max | {' | '.join(f'{max(c):.1f} ms' for c in columns)} | | |",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(harness.run("contexts", TIME_BUDGET, report))
