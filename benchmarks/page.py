"""How fast the session page becomes usable, beside the sessions list page, measured in Chromium.

Run from the project root: ``.venv/bin/python benchmarks/page.py``. The script makes a fresh
SQLite database in a scratch folder, a user and four sessions whose event logs are written as a
worker writes them (questions, streamed answers, cells, output, tables): one of 20 events, one of
2,000, one holding a cell that printed 200,000 lines, and an empty one. It serves config.asgi with
scripts/web as benchmarks/uploads.py starts it (Redis database 12, flushed before and after), logs
in with Chromium (/usr/bin/chromium, as the browser tests do) and loads each page RUNS times after
one warm-up load
(static files cached, as for anyone who has opened the app before). A page is ready when what it
shows is there: the list page at its ``load`` event with the sessions listed, a session page when
its transcript holds the session's last event and its composer takes input. Figures are medians,
in milliseconds from the navigation's start; the loads go round the pages, one of each a round,
so that a machine's changing load weighs on every page alike. It prints Markdown and writes
benchmarks/results/page.md.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import redis  # noqa: E402

from benchmarks import harness  # noqa: E402
from benchmarks.harness import load_average, step  # noqa: E402
from benchmarks.uploads import web  # noqa: E402  (scripts/web serving config.asgi, started and stopped)

RUNS = int(os.environ.get("BENCH_PAGE_RUNS", "7"))
REDIS_URL = "redis://127.0.0.1:6379/12"
CHROMIUM = "/usr/bin/chromium"
PASSWORD = "a-long-benchmark-passphrase"
TIME_BUDGET = 900
# Targets (issue 15): the session page beside the list, a long log beside a short one, a page
# holding a huge output beside an empty one.
SESSION_VS_LIST = 3.0
LONG_VS_SHORT = 1.3
HUGE_VS_EMPTY = 1.5

# A page's readiness, checked on every animation frame; the first time it holds is recorded.
READY = """(marker) => {
  const ready = marker === null
    ? document.readyState === 'complete' && document.querySelector('[data-testid=session-list], main')
    : document.querySelector('[data-testid=transcript]')?.textContent.includes(marker)
      && document.querySelector('[data-testid=composer-input]') && document.readyState === 'complete';
  if (ready && window.__readyAt === undefined) window.__readyAt = performance.now();
  return ready;
}"""


# ---- the sessions --------------------------------------------------------------------------


def turn_events(n: int) -> list[tuple[str, dict[str, Any]]]:
    """One question answered with a cell, its output and a table, as a worker logs it (10 events)."""
    table = (
        "<table border='1' class='dataframe'><thead><tr><th></th><th>region</th><th>amount</th></tr>"
        f"</thead><tbody><tr><th>0</th><td>north</td><td>{n}</td></tr>"
        f"<tr><th>1</th><td>south</td><td>{n + 1}</td></tr></tbody></table>"
    )
    return [
        ("user_message", {"text": f"Question {n}: which region sells most?"}),
        ("turn_started", {"kind": "chat"}),
        ("assistant_delta", {"text": f"Let me look at step {n}. "}),
        ("assistant_message", {"text": f"Let me look at step {n}."}),
        (
            "tool_call",
            {"id": f"toolu_{n}", "name": "run_python", "code": f"df.groupby('region').sum()  # {n}"},
        ),
        ("stdout", {"text": f"rows: {n}\n", "tool_call_id": f"toolu_{n}"}),
        (
            "result",
            {
                "data": {"text/html": table, "text/plain": "..."},
                "artifacts": {},
                "is_main_result": True,
                "tool_call_id": f"toolu_{n}",
            },
        ),
        ("cell_done", {"failed": False, "tool_call_id": f"toolu_{n}"}),
        ("assistant_message", {"text": f"South sells most at step {n}: **{n + 1}**."}),
        ("turn_done", {"usage": {"calls": 1, "input_tokens": 10, "output_tokens": 5}}),
    ]


def huge_cell_events(lines: int, per_event: int = 2_000) -> list[tuple[str, dict[str, Any]]]:
    found: list[tuple[str, dict[str, Any]]] = [
        ("cell", {"code": f"for i in range({lines}):\n    print('line', i)"})
    ]
    found.append(("turn_started", {"kind": "cell"}))
    for start in range(0, lines, per_event):
        text = "".join(f"line {i}\n" for i in range(start, min(start + per_event, lines)))
        found.append(("stdout", {"text": text}))
    found += [("cell_done", {"failed": False}), ("turn_done", {"usage": {}})]
    return found


@dataclass
class Fixture:
    label: str
    session_id: str
    marker: str | None  # text of its last event, which the page shows once it has caught up
    events: int


def make_sessions(env: dict[str, str]) -> list[Fixture]:
    """The user and the sessions, written straight to the database in the scratch folder."""
    os.environ.update(env)
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from analyst.models import AnalysisSession, Event

    call_command("migrate", "--noinput", verbosity=0)
    user = get_user_model().objects.create_user("bench", password=PASSWORD)

    def session(title: str, logged: list[tuple[str, dict[str, Any]]]) -> str:
        made = AnalysisSession.objects.create(owner=user, model="anthropic/claude-test", title=title)
        rows = [
            Event(session=made, seq=n, type=kind, payload=payload)
            for n, (kind, payload) in enumerate(logged, 1)
        ]
        Event.objects.bulk_create(rows, batch_size=500)
        AnalysisSession.objects.filter(id=made.id).update(next_seq=len(rows) + 1)
        return str(made.id)

    short = [event for n in range(2) for event in turn_events(n)]
    long = [event for n in range(200) for event in turn_events(n)]
    huge = huge_cell_events(200_000)
    return [
        Fixture("20 events", session("Short", short), "South sells most at step 1", len(short)),
        Fixture("2,000 events", session("Long", long), "South sells most at step 199", len(long)),
        Fixture("a 200,000-line cell", session("Huge output", huge), "Show all 200,000 lines", len(huge)),
        Fixture("no events", session("Empty", []), "", 0),
    ]


# ---- the server and the browser ------------------------------------------------------------


def flush_redis() -> None:
    redis.Redis.from_url(REDIS_URL).flushdb()


@dataclass
class Load:
    ready_ms: float
    requests: int  # to the app, after the page itself
    event_requests: int  # of them, to the event log
    nodes: int  # elements in the page once ready


def load(page: Any, url: str, marker: str | None) -> Load:
    requests: list[Any] = []

    def seen(request: Any) -> None:
        requests.append(request)

    page.on("request", seen)
    page.goto(url, wait_until="commit")
    page.wait_for_function(READY, arg=marker, polling="raf", timeout=120_000)
    ready = page.evaluate("() => window.__readyAt")
    nodes = page.evaluate("() => document.getElementsByTagName('*').length")
    page.remove_listener("request", seen)
    events = [r for r in requests if "/events?" in r.url]  # not /static/app/events.js
    return Load(ready, len(requests) - 1, len(events), nodes)


def measure(url: str, fixtures: list[Fixture]) -> dict[str, list[Load]]:
    from playwright.sync_api import sync_playwright

    targets = {"sessions list": (f"{url}/sessions/", None)}
    targets |= {f.label: (f"{url}/sessions/{f.session_id}/", f.marker) for f in fixtures}
    found: dict[str, list[Load]] = {label: [] for label in targets}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.goto(f"{url}/accounts/login/")
        page.fill("input[name=username]", "bench")
        page.fill("input[name=password]", PASSWORD)
        page.click("form[data-testid=login-form] button[type=submit]")
        page.wait_for_url(f"{url}/sessions/")
        step("a warm-up load of each page")
        for target, marker in targets.values():
            load(page, target, marker)
        # Round by round, each page once a round: on a shared machine, whose load comes and goes,
        # pages measured one after another in blocks were compared at different loads.
        for run in range(RUNS):
            step(f"round {run + 1} of {RUNS}: each page once")
            for label, (target, marker) in targets.items():
                found[label].append(load(page, target, marker))
        browser.close()
    return found


# ---- the report ----------------------------------------------------------------------------


def median(loads: list[Load], field: str = "ready_ms") -> float:
    return statistics.median(getattr(load, field) for load in loads)


def report(folder: Path, load_at_start: str) -> str:
    env = {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "benchmark",
        "DEBUG": "0",
        "DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}",
        "REDIS_URL": REDIS_URL,
        "MEDIA_ROOT": str(folder / "media"),
    }
    step("a fresh database: a user and four sessions")
    fixtures = make_sessions(env)
    flush_redis()
    try:
        with web(env, folder / "web.log") as (_, url):
            loads = measure(url, fixtures)
    finally:
        flush_redis()
    return render(loads, fixtures, load_at_start)


def render(loads: dict[str, list[Load]], fixtures: list[Fixture], load_at_start: str) -> str:
    listing, short, long, huge, empty = (
        median(loads[k]) for k in ["sessions list", *(f.label for f in fixtures)]
    )

    def verdict(ratio: float, target: float) -> str:
        return "pass" if ratio <= target else "**FAIL**"

    def row(what: str, value: float, baseline: float, target: float) -> str:
        ratio = value / baseline
        figures = f"{value:.0f} | {baseline:.0f} | {ratio:.2f}×"
        return f"| {what} | {figures} | ≤ {target}× | {verdict(ratio, target)} |"

    rows = [
        "| Page, ready (median ms from the navigation's start) | Page | Baseline | Ratio | Target | Result |",
        "|---|---|---|---|---|---|",
        row("A session of 20 events, beside the sessions list", short, listing, SESSION_VS_LIST),
        row("A session of 2,000 events, beside one of 20", long, short, LONG_VS_SHORT),
        row("A session holding a 200,000-line cell, beside an empty one", huge, empty, HUGE_VS_EMPTY),
    ]
    details = [
        "| Page | Events | Ready, median (min–max) ms | Requests after it | Event log requests | Elements |",
        "|---|---|---|---|---|---|",
    ]
    sizes = {"sessions list": "", **{f.label: f"{f.events:,}" for f in fixtures}}
    for label, measured in loads.items():
        times = [m.ready_ms for m in measured]
        spread = f"{statistics.median(times):.0f} ({min(times):.0f}–{max(times):.0f})"
        details.append(
            f"| {label} | {sizes[label]} | {spread} | {median(measured, 'requests'):.0f}"
            f" | {median(measured, 'event_requests'):.0f} | {median(measured, 'nodes'):,.0f} |"
        )
    when = time.strftime("%Y-%m-%d %H:%M")
    head = (
        f"Page benchmark, {when}, {os.cpu_count()} CPUs, load average {load_at_start} at start,"
        f" {load_average()} at end. Chromium, 1280×900, static files cached; {RUNS} loads of each"
        " page after a warm-up. scripts/web (uvicorn), SQLite, DEBUG off."
    )
    return "\n\n".join([head, "\n".join(rows), "\n".join(details)]) + "\n"


if __name__ == "__main__":
    sys.exit(harness.run("page", TIME_BUDGET, report))
