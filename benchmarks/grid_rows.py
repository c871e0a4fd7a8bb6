"""The grid's rows over a 1,000,000-row DataFrame (``CodeContext.rows``, what
GET /api/sessions/<id>/variables/<name>/rows asks sandboxd): a page of 50 rows, sorted by a
number, sorted by a text column, filtered by text, filtered and sorted; each timed as a new query
(the kernel computes the order) and as the next page of it (the order kept), beside the baseline
measured in the same run: the unsorted, unfiltered first page.

Run from the project root: ``.venv/bin/python benchmarks/grid_rows.py`` (``--quick``: 5 of each).
The queries take turns, so each first page is a new query. Prints a Markdown table and writes it
to benchmarks/results/grid_rows.md.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import harness  # noqa: E402
from benchmarks.harness import load_average, step  # noqa: E402
from sandboxes import Sandbox  # noqa: E402

QUICK = "--quick" in sys.argv[1:]
REPEATS = 5 if QUICK else 20
ROWS = 1_000_000
LIMIT = 50
TARGET_MS = 300.0
TIME_BUDGET = 900
FRAME = f"""
import numpy as np, pandas as pd
rng = np.random.default_rng(0)
cities = np.array(['Oslo', 'Lima', 'Pune', 'Kyiv', 'Accra', 'Anchorage', 'Boston', 'Cairo'] * 25)
df = pd.DataFrame({{
    'id': np.arange({ROWS}),
    'city': rng.choice(cities, {ROWS}),
    'amount': rng.random({ROWS}) * 1000,
    'when': pd.Timestamp('2024-01-01') + pd.to_timedelta(rng.integers(0, 10**7, {ROWS}), unit='s'),
}})
"""
QUERIES = {
    "baseline: unsorted first page": {},
    "sorted by a number (`amount`, descending)": {"sort": "amount", "desc": True},
    "sorted by text (`city`)": {"sort": "city"},
    "filtered (`anchorage`)": {"filter": "anchorage"},
    "filtered and sorted (`anchorage`, by `when`)": {"filter": "anchorage", "sort": "when"},
}


def report(folder: Path, load_at_start: str) -> str:
    with (
        harness.sandboxd(folder / "sandboxd", {}) as server,
        Sandbox.create(url=server.url, token=server.token) as sandbox,
    ):
        assert sandbox.run_code(FRAME, timeout=120).error is None
        context = sandbox.default_context
        first: dict[str, list[float]] = {name: [] for name in QUERIES}
        following: dict[str, list[float]] = {name: [] for name in QUERIES}
        step(f"{len(QUERIES)} queries × {REPEATS} over {ROWS:,} rows (load {load_average()})")
        for _ in range(REPEATS):
            for name, query in QUERIES.items():
                for offset, into in ((0, first), (10 * LIMIT, following)):
                    started = time.perf_counter()
                    page = context.rows("df", offset=offset, limit=LIMIT, **query)
                    into[name].append((time.perf_counter() - started) * 1000)
                    assert page.all_rows == ROWS and (page.rows or page.total_rows <= offset)
    baseline = statistics.median(first["baseline: unsorted first page"])
    lines = [
        f"A {ROWS:,}-row DataFrame (int, text of 200 values, float, datetime); pages of {LIMIT} rows through"
        f" the SDK to sandboxd, {REPEATS} of each, queries taking turns (load average at start:"
        f" {load_at_start}, at end: {load_average()}).",
        "",
        "| Query | New query, p50 | max | Next page, p50 | vs. baseline | Target | Result |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in QUERIES:
        p50 = statistics.median(first[name])
        verdict = "pass" if p50 <= TARGET_MS else "**FAIL**"
        next_page = statistics.median(following[name])
        lines.append(
            f"| {name} | {p50:.1f} ms | {max(first[name]):.1f} ms | {next_page:.1f} ms"
            f" | {p50 / baseline:.1f}× | ≤ {TARGET_MS:g} ms | {verdict} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(harness.run("grid_rows", TIME_BUDGET, report))
