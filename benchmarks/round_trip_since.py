"""A cell's round trip on this checkout beside the same on an earlier commit, in one run: a
change may cost ``run_code("1+1")`` at most 5 % (issue 24 asks so of its hardening).

The earlier commit is checked out in a temporary git worktree; each side runs its own sandboxd
(its code, this checkout's built template, the default isolation driver) with one sandbox, and
the two are timed in alternating rounds, so that the machine's load falls on both alike.

Run from the project root: ``.venv/bin/python benchmarks/round_trip_since.py COMMIT``
(``--quick``: a fifth of the cells). Prints a Markdown table and writes it to
benchmarks/results/round_trip_since.md.
"""

from __future__ import annotations

import contextlib
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import harness  # noqa: E402
from benchmarks.harness import load_average, step  # noqa: E402
from sandboxes import Sandbox  # noqa: E402
from tests.sandboxd_process import SandboxdProcess  # noqa: E402

QUICK = "--quick" in sys.argv[1:]
ROUNDS = 10
PER_ROUND = 20 if QUICK else 100
WARMUP = 50
TARGET_RATIO = 1.05
TIME_BUDGET = 900


def commit_asked() -> str:
    commits = [arg for arg in sys.argv[1:] if not arg.startswith("--")]
    if len(commits) != 1:
        raise SystemExit("usage: benchmarks/round_trip_since.py COMMIT [--quick]")
    return commits[0]


@contextlib.contextmanager
def checkout(commit: str, folder: Path) -> Iterator[Path]:
    """``commit`` checked out at ``folder`` (a git worktree), removed after."""
    subprocess.run(["git", "worktree", "add", "--detach", str(folder), commit], cwd=ROOT, check=True)
    try:
        yield folder
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(folder)], cwd=ROOT, check=False)


def sandboxd(root: Path, folder: Path) -> contextlib.AbstractContextManager[SandboxdProcess]:
    """``root``'s sandboxd, with this checkout's built template."""
    return harness.sandboxd(folder, {"SANDBOXD_TEMPLATES_DIR": str(ROOT / "var" / "templates")}, root=root)


def timed_cells(sandbox: Sandbox, count: int) -> list[float]:
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        text = sandbox.run_code("1+1").text
        samples.append((time.perf_counter() - started) * 1000)
        if text != "2":
            raise RuntimeError(f"1+1 gave {text!r}")
    return samples


def p90(samples: list[float]) -> float:
    return sorted(samples)[int(0.9 * len(samples))]


def report(folder: Path, load_at_start: str) -> str:
    commit = commit_asked()
    described = ["git", "log", "-1", "--format=%h (%cs)", commit]
    label = subprocess.run(described, cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    with (
        checkout(commit, folder / "before") as before_root,
        sandboxd(before_root, folder / "before-sandboxd") as before,
        sandboxd(ROOT, folder / "now-sandboxd") as now,
        Sandbox.create(url=before.url, token=before.token) as old_sandbox,
        Sandbox.create(url=now.url, token=now.token) as new_sandbox,
    ):
        timed_cells(old_sandbox, WARMUP)
        timed_cells(new_sandbox, WARMUP)
        then: list[float] = []
        here: list[float] = []
        for index in range(ROUNDS):
            step(f"round {index + 1} of {ROUNDS} (load {load_average()})")
            then += timed_cells(old_sandbox, PER_ROUND)
            here += timed_cells(new_sandbox, PER_ROUND)
    ratio = statistics.median(here) / statistics.median(then)
    verdict = "pass" if ratio <= TARGET_RATIO else "**FAIL**"
    return (
        "\n".join(
            [
                f'`run_code("1+1")`, {ROUNDS} alternating rounds of {PER_ROUND} on each side after {WARMUP}'
                f" untimed (load average at start: {load_at_start}, at end: {load_average()}).",
                "",
                f"| Measure | This checkout | {label} (baseline) | Target | Result |",
                "|---|---|---|---|---|",
                f"| p50 | {statistics.median(here):.2f} ms | {statistics.median(then):.2f} ms |"
                f" ≤ {TARGET_RATIO:.2f}× | {verdict} ({ratio:.3f}×) |",
                f"| p90 | {p90(here):.2f} ms | {p90(then):.2f} ms | | |",
            ]
        )
        + "\n"
    )


if __name__ == "__main__":
    sys.exit(harness.run("round_trip_since", TIME_BUDGET, report))
