"""One tool call through our turn path beside a bare ``run_code``: added overhead, turns per second.

Run from the project root: ``.venv/bin/python benchmarks/turn.py``. The script starts the whole
stack itself in a temporary folder: a sandboxd with a warm pool of POOL_SIZE, a fresh SQLite
database migrated with ``manage.py migrate``, a scripted model server that answers at once (a
``run_python`` call of ``1+1``, then "done" once the call's result is in), and a Celery worker on a
Redis database of its own (REDIS_URL, flushed first). It listens on the Channels layer as a browser
would and times, for one tool call, the user's message in → that call's ``result`` event stored and
broadcast, beside the same cell's bare ``run_code`` through the SDK; then turns per second with
SESSIONS sessions at once. It prints a Markdown table and writes it to benchmarks/results/turn.md.
Every process it starts is stopped, and every folder it makes removed, on exit, on error and on
Ctrl-C.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import platform
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Coroutine, Iterator
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import redis  # noqa: E402

from benchmarks import harness  # noqa: E402
from benchmarks.harness import load_average, step  # noqa: E402
from benchmarks.sandbox import (  # noqa: E402
    ancestry,
    cpu_ticks,
    kernel_pids,
    parents,
    percentile,
    running_pid,
)
from sandboxes import Sandbox  # noqa: E402
from tests.fakes.model_server import (  # noqa: E402
    RecordedRequest,
    Reply,
    ScriptedModelServer,
    anthropic_text,
    anthropic_tool_call,
)
from tests.sandboxd_process import SandboxdProcess  # noqa: E402
from tests.worker_process import CeleryWorkerProcess  # noqa: E402

REDIS_URL = "redis://127.0.0.1:6379/10"  # a database of its own: flushed before and after
MODEL = "anthropic/claude-test"
CELL = "1+1"
QUESTION = "What is 1+1?"

POOL_SIZE = 4
WORKER_CONCURRENCY = 2  # what tests/worker_process.py, scripts/run and docker-compose.yml start
BARE_WARMUP = 20
BARE_RUNS = 200
TURN_WARMUP = 5
TURNS = 100
SESSIONS = 20
TURNS_PER_SESSION = 5

# Target.
OVERHEAD_P50_MS = 25.0

TURN_TIMEOUT = 60.0  # one turn, message in → turn_done; the first, which makes a sandbox, included
SETTLE_WINDOW = 0.3  # seconds with no CPU use under sandboxd that count as "the pool is refilled"
SETTLE_TIMEOUT = 60.0
TIME_BUDGET = 240  # hard stop (seconds)

ABANDON = threading.Event()  # set on Ctrl-C or error: seat threads stop waiting and return


# ---- the scripted model ----------------------------------------------------------------------


class InstantModel(ScriptedModelServer):
    """Answers each request at once, from the request itself, so concurrent turns never take each
    other's replies: a ``run_python`` call of CELL, or "done" once that call's result is in."""

    def __init__(self) -> None:
        super().__init__(expect_all_used=False)
        self.calls = itertools.count(1)

    def _answer(self, request: RecordedRequest) -> Reply:
        messages = request.json["messages"]
        last = messages[-1] if messages else {"role": "user", "content": []}
        if last["role"] == "user" and any(block["type"] == "tool_result" for block in last["content"]):
            return anthropic_text("done").paced(0)
        tool_id = f"toolu_{next(self.calls):04d}"
        return anthropic_tool_call("run_python", {"code": CELL}, tool_id=tool_id).paced(0)


# ---- the Channels layer, as a browser's connection sees it ------------------------------------


@dataclass(frozen=True)
class Arrival:
    at: float  # time.perf_counter() when the broadcast reached us
    event: dict[str, Any]


class Listener:
    """A Channels layer client on its own thread and event loop: joins sessions' groups and
    timestamps every broadcast event as it arrives, into one inbox per session."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="listener", daemon=True)
        self.receivers: list[asyncio.Task[None]] = []

    def __enter__(self) -> Listener:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(Exception):
            self._call(self._close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)

    def subscribe(self, session_id: object) -> queue.Queue[Arrival]:
        inbox: queue.Queue[Arrival] = queue.Queue()
        self._call(self._subscribe(session_id, inbox))
        return inbox

    def _call(self, coroutine: Coroutine[Any, Any, None]) -> None:
        asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=10)

    async def _subscribe(self, session_id: object, inbox: queue.Queue[Arrival]) -> None:
        from channels.layers import get_channel_layer

        from analyst.realtime import events

        layer = get_channel_layer()
        channel = await layer.new_channel()
        await layer.group_add(events.group_name(session_id), channel)
        self.receivers.append(asyncio.create_task(self._receive(layer, channel, inbox)))

    @staticmethod
    async def _receive(layer: Any, channel: str, inbox: queue.Queue[Arrival]) -> None:
        while True:
            message = await layer.receive(channel)
            inbox.put(Arrival(time.perf_counter(), message["event"]))

    async def _close(self) -> None:
        from channels.layers import get_channel_layer

        for task in self.receivers:
            task.cancel()
        await asyncio.gather(*self.receivers, return_exceptions=True)
        await get_channel_layer().close_pools()


# ---- one turn --------------------------------------------------------------------------------


@dataclass
class Timeline:
    """One turn: when it was asked, when the ask returned, when each event type first arrived."""

    start: float
    accepted: float
    arrivals: dict[str, float] = field(default_factory=dict)

    def ms(self, type: str) -> float:
        """Milliseconds from the user's message to the first broadcast of ``type``."""
        moment = self.accepted if type == "accepted" else self.arrivals[type]
        return (moment - self.start) * 1000

    def stage(self, begin: str, end: str) -> float:
        return self.ms(end) - self.ms(begin)


@dataclass
class Seat:
    """A session the benchmark asks in, with the inbox of its broadcast events."""

    session: Any
    inbox: queue.Queue[Arrival]


def follow(inbox: queue.Queue[Arrival], turn_id: int, deadline: float) -> dict[str, float]:
    """Arrival times of the turn's events, by type, once its turn_done has arrived."""
    arrivals: dict[str, float] = {}
    while "turn_done" not in arrivals:
        if ABANDON.is_set():
            raise RuntimeError("abandoned")
        if time.perf_counter() > deadline:
            raise TimeoutError(
                f"turn {turn_id}: no turn_done within {TURN_TIMEOUT:.0f}s; broadcast:"
                f" {sorted(arrivals)}, stored: {stored_types(turn_id)}"
            )
        try:
            arrival = inbox.get(timeout=0.2)
        except queue.Empty:
            continue
        event = arrival.event
        if event["turn"] != turn_id:
            continue
        if event["type"] in ("turn_failed", "turn_cancelled", "error"):
            raise RuntimeError(f"turn {turn_id} went wrong: {event}")
        if event["type"] == "result" and event["payload"]["data"].get("text/plain") != "2":
            raise RuntimeError(f"turn {turn_id}: {CELL} gave {event['payload']}")
        arrivals.setdefault(event["type"], arrival.at)
    return arrivals


def stored_types(turn_id: int) -> list[str]:
    """The types of the turn's events in the database, in order, and its status."""
    from analyst.models import Event, Turn

    types = list(Event.objects.filter(turn_id=turn_id).order_by("seq").values_list("type", flat=True))
    return [*types, f"(turn {Turn.objects.get(id=turn_id).status})"]


def ask(seat: Seat, user: Any) -> Timeline:
    """One chat turn, message in → turn_done broadcast; the user's message goes in as the API's
    POST would put it (``do_start_turn``: stored, then the task enqueued on commit)."""
    from analyst.models import Turn
    from analyst.turns import turns

    start = time.perf_counter()
    turn = turns.do_start_turn(session=seat.session, user=user, kind=Turn.Kind.CHAT, text=QUESTION)
    accepted = time.perf_counter()
    return Timeline(start, accepted, follow(seat.inbox, turn.id, start + TURN_TIMEOUT))


def ask_repeatedly(
    seat: Seat, user: Any, count: int, ready: threading.Barrier | None = None
) -> list[Timeline]:
    """``count`` turns back to back, each once the one before is done; for a thread of its own."""
    from django.db import connection

    try:
        if ready is not None:
            ready.wait(timeout=TURN_TIMEOUT)
        return [ask(seat, user) for _ in range(count)]
    finally:
        connection.close()


def ask_together(seats: list[Seat], user: Any, count: int) -> list[list[Timeline]]:
    """Every seat asks ``count`` turns back to back, all seats at once, released together."""
    ready = threading.Barrier(len(seats))
    pool = ThreadPoolExecutor(max_workers=len(seats), thread_name_prefix="seat")
    try:
        futures = [pool.submit(ask_repeatedly, seat, user, count, ready) for seat in seats]
        pending = set(futures)
        while pending:  # in short slices, so that Ctrl-C reaches this thread at once
            done, pending = wait(pending, timeout=0.2, return_when=FIRST_EXCEPTION)
            for future in done:
                future.result()  # a seat's failure ends the run now
        return [future.result() for future in futures]
    except BaseException:
        ABANDON.set()
        ready.abort()
        raise
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


# ---- the stack -------------------------------------------------------------------------------


@dataclass
class Stack:
    sandboxd: SandboxdProcess
    worker: CeleryWorkerProcess
    model: InstantModel
    listener: Listener
    user: Any


def flush_redis() -> None:
    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.flushdb()
    finally:
        client.close()


def migrate(env: dict[str, str]) -> None:
    subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "migrate", "--noinput", "-v", "0"],
        cwd=ROOT,
        env={**os.environ, **env},
        check=True,
    )


def wait_for_quiet(server: SandboxdProcess, kernels: int) -> None:
    """Block until at least ``kernels`` kernels run under sandboxd and nothing under it used CPU
    for SETTLE_WINDOW seconds: the pool has refilled and no kernel is starting."""
    deadline = time.monotonic() + SETTLE_TIMEOUT
    while time.monotonic() < deadline:
        server_pid = running_pid(server)
        table = parents()
        family = [pid for pid in table if ancestry(pid, table, server_pid)] + [server_pid]
        before = [cpu_ticks(pid) for pid in family]
        time.sleep(SETTLE_WINDOW)
        if len(kernel_pids(server_pid)) >= kernels and [cpu_ticks(pid) for pid in family] == before:
            return
    raise TimeoutError(f"sandboxd did not settle at {kernels} idle kernels within {SETTLE_TIMEOUT:.0f}s")


@contextlib.contextmanager
def stack(folder: Path) -> Iterator[Stack]:
    """Everything started, in ``folder``; everything stopped on the way out, whatever happens."""
    with contextlib.ExitStack() as exits:
        step(f"sandboxd with a pool of {POOL_SIZE}; a fresh SQLite database; Redis {REDIS_URL}")
        server = SandboxdProcess(
            data_dir=folder / "sandboxd",
            log_path=folder / "sandboxd.log",
            settings={
                "SANDBOXD_POOL_SIZE": str(POOL_SIZE),
                "SANDBOXD_POOL_MAX": str(POOL_SIZE),  # fixed, as when the figures were first taken
                "SANDBOXD_DEFAULT_TTL": "600",
            },
        )
        exits.callback(server.stop)  # its workdir mounts vanish with its mount namespace
        server.start()
        model = InstantModel()
        model.start()
        exits.callback(model.stop)
        env = {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "SECRET_KEY": "benchmark",
            "DEBUG": "0",  # as deployed, whatever .env says (DEBUG also logs every query)
            "DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}",
            "REDIS_URL": REDIS_URL,
            "CELERY_QUEUE": "celery",  # the queue the worker below consumes, whatever .env says
            "MEDIA_ROOT": str(folder / "media"),
            "SANDBOXD_URL": server.url,
            "SANDBOXD_TOKEN": server.token,
            # One user asks in all SESSIONS at once: past the default share of one user.
            "ANALYST_LIMIT_CONCURRENT_TURNS": "0",
            "ANALYST_LIMIT_CELLS_PER_MINUTE": "0",
            **model.env(),
        }
        os.environ.update(env)  # this process's Django, and the worker's inherited environment
        flush_redis()
        exits.callback(flush_redis)
        migrate(env)
        import django

        django.setup()
        logging.getLogger("httpx").setLevel(logging.WARNING)  # our own SDK calls, not the report
        from django.contrib.auth import get_user_model

        user = get_user_model().objects.create_user("bench", password="bench")
        step(f"Celery worker, concurrency {WORKER_CONCURRENCY}")
        worker = CeleryWorkerProcess(log_path=folder / "worker.log", env=env)
        exits.callback(worker.stop)
        worker.start()
        listener = exits.enter_context(Listener())
        yield Stack(server, worker, model, listener, user)


def new_seat(stack: Stack) -> Seat:
    from analyst.models import AnalysisSession

    session = AnalysisSession.objects.create(owner=stack.user, model=MODEL)
    return Seat(session, stack.listener.subscribe(session.id))


# ---- measurements ----------------------------------------------------------------------------


@dataclass
class Figures:
    bare_ms: list[float]
    sequential: list[Timeline]
    concurrent: list[Timeline]
    concurrent_wall_s: float

    @property
    def path_ms(self) -> list[float]:
        return [t.ms("result") for t in self.sequential]

    @property
    def overhead_ms(self) -> list[float]:
        """Each path less the cell's typical bare round trip (the bare runs' median)."""
        typical = percentile(self.bare_ms, 50)
        return [path - typical for path in self.path_ms]

    @property
    def concurrent_ms(self) -> list[float]:
        return [t.ms("turn_done") for t in self.concurrent]

    @property
    def turns_per_second(self) -> float:
        return len(self.concurrent) / self.concurrent_wall_s


def bare_run_code(server: SandboxdProcess) -> list[float]:
    """BARE_RUNS timed ``run_code(CELL)`` round trips through the SDK, after BARE_WARMUP."""
    step(f"bare run_code: {BARE_RUNS} runs of {CELL!r} after {BARE_WARMUP} warm-up")
    samples = []
    with Sandbox.create(url=server.url, token=server.token) as sandbox:
        for _ in range(BARE_WARMUP):
            sandbox.run_code(CELL)
        wait_for_quiet(server, POOL_SIZE + 1)
        for _ in range(BARE_RUNS):
            start = time.perf_counter()
            execution = sandbox.run_code(CELL)
            samples.append((time.perf_counter() - start) * 1000)
            if execution.text != "2":
                raise RuntimeError(f"bare {CELL}: expected '2', got {execution.text!r}")
    return samples


def sequential_turns(stack: Stack) -> list[Timeline]:
    """TURNS turns one after another in one session, after TURN_WARMUP (the first makes its sandbox)."""
    step(f"our path: {TURNS} turns in one session, one at a time, after {TURN_WARMUP} warm-up")
    seat = new_seat(stack)
    ask_repeatedly(seat, stack.user, TURN_WARMUP)
    wait_for_quiet(stack.sandboxd, POOL_SIZE + 1)
    return ask_repeatedly(seat, stack.user, TURNS)


def concurrent_turns(stack: Stack) -> tuple[list[Timeline], float]:
    """SESSIONS sessions at once, TURNS_PER_SESSION turns each back to back, after one warm-up
    turn each (which makes their sandboxes); returns every turn and the wall time in seconds."""
    step(f"{SESSIONS} sessions at once: a warm-up turn each (making sandboxes), then {TURNS_PER_SESSION}")
    seats = [new_seat(stack) for _ in range(SESSIONS)]
    ask_together(seats, stack.user, 1)
    wait_for_quiet(stack.sandboxd, POOL_SIZE + SESSIONS)
    timelines = [t for per_seat in ask_together(seats, stack.user, TURNS_PER_SESSION) for t in per_seat]
    first = min(t.start for t in timelines)
    last = max(t.arrivals["turn_done"] for t in timelines)
    return timelines, last - first


def check_stored(stack: Stack, expected: int) -> None:
    """Every broadcast result is in the stored log too (broadcasts go out only after commit)."""
    from analyst.models import Event

    stored = Event.objects.filter(type="result", session__owner=stack.user).count()
    if stored != expected:
        raise RuntimeError(f"{stored} result events stored, {expected} expected")


def measure(folder: Path) -> Figures:
    with stack(folder) as running:
        wait_for_quiet(running.sandboxd, POOL_SIZE)
        bare = bare_run_code(running.sandboxd)
        sequential = sequential_turns(running)
        concurrent, wall = concurrent_turns(running)
        check_stored(running, TURN_WARMUP + TURNS + SESSIONS * (1 + TURNS_PER_SESSION))
    return Figures(bare, sequential, concurrent, wall)


# ---- report ----------------------------------------------------------------------------------


def ms(samples: list[float], pct: int) -> str:
    return f"{percentile(samples, pct):.1f} ms"


def row(measure: str, value: str, baseline: str = "", target: str = "", passed: bool | None = None) -> str:
    verdict = "" if passed is None else "pass" if passed else "**FAIL**"
    return f"| {measure} | {value} | {baseline} | {target} | {verdict} |"


def table(figures: Figures) -> str:
    path, bare, overhead = figures.path_ms, figures.bare_ms, figures.overhead_ms
    whole = [t.ms("turn_done") for t in figures.sequential]
    together = figures.concurrent_ms
    rows = [
        "| Measure | Our path | Bare `run_code` (baseline) | Target | Result |",
        "|---|---|---|---|---|",
        row("One tool call: message in → `result` stored and broadcast, p50", ms(path, 50), ms(bare, 50)),
        row("One tool call: message in → `result` stored and broadcast, p99", ms(path, 99), ms(bare, 99)),
        row(
            "Added overhead (path − bare p50), p50",
            ms(overhead, 50),
            "",
            f"≤ {OVERHEAD_P50_MS:.0f} ms",
            percentile(overhead, 50) <= OVERHEAD_P50_MS,
        ),
        row("Added overhead (path − bare p50), p99", ms(overhead, 99)),
        row("Whole turn, one session: message in → `turn_done` broadcast, p50", ms(whole, 50)),
        row(
            f"Throughput, {SESSIONS} sessions at once × {TURNS_PER_SESSION} turns",
            f"{figures.turns_per_second:.1f} turns/s",
        ),
        row(f"Turn latency, {SESSIONS} sessions at once, p50", ms(together, 50)),
        row(f"Turn latency, {SESSIONS} sessions at once, p99", ms(together, 99)),
    ]
    return "\n".join(rows)


STAGES = [
    ("start", "accepted", "`do_start_turn`: request and `user_message` stored, task enqueued"),
    ("accepted", "turn_started", "→ `turn_started` broadcast: Celery delivery, claim"),
    ("turn_started", "tool_call", "→ `tool_call` broadcast: history, prompt, model request and answer"),
    ("tool_call", "result", "→ `result` broadcast: sandbox connect, `run_code`, store"),
    ("result", "turn_done", "→ `turn_done` broadcast: second model request, answer stored"),
]


def stages(figures: Figures) -> str:
    """Where a sequential turn's time goes, between the broadcasts a subscriber sees."""
    rows = ["| Stage of one turn (one session, one at a time) | p50 | p99 |", "|---|---|---|"]
    for begin, end, label in STAGES:
        if begin == "start":
            samples = [t.ms("accepted") for t in figures.sequential]
        else:
            samples = [t.stage(begin, end) for t in figures.sequential]
        rows.append(f"| {label} | {ms(samples, 50)} | {ms(samples, 99)} |")
    return "\n".join(rows)


def header(load_at_start: str) -> str:
    return (
        f"Turn benchmark, {time.strftime('%Y-%m-%d %H:%M')}, {platform.machine()}, {os.cpu_count()} CPUs,"
        f" load average {load_at_start} at start, {load_average()} at end. sandboxd pool {POOL_SIZE};"
        f" Celery worker concurrency {WORKER_CONCURRENCY} (prefork); SQLite; Redis; DEBUG off;"
        f" {BARE_RUNS} bare `run_code` runs after {BARE_WARMUP} warm-up; {TURNS} sequential turns after"
        f" {TURN_WARMUP} warm-up; {SESSIONS} sessions × {TURNS_PER_SESSION} turns after a warm-up turn each."
    )


def footnote() -> str:
    return (
        "Each turn is a chat message answered by a local scripted model that replies at once (no pause"
        f' between chunks): a `run_python` call of `{CELL}`, then "done". Path: from calling'
        " `do_start_turn` (what the API's POST calls) to the arrival of that call's `result` event on the"
        " Channels layer, at a subscriber in the benchmark process (broadcasts go out after commit, so it"
        " is stored by then). Overhead: each path less the bare runs' median. Bare: `Sandbox.create()` once,"
        f' then `run_code("{CELL}")` through the SDK to the same sandboxd. Throughput: every turn\'s'
        " message in → `turn_done` broadcast, over the wall time from the first message to the last"
        " `turn_done`."
    )


# ---- main ------------------------------------------------------------------------------------


def report(folder: Path, load_at_start: str) -> str:
    figures = measure(folder)
    return f"{header(load_at_start)}\n\n{table(figures)}\n\n{stages(figures)}\n\n{footnote()}\n"


def main() -> int:
    return harness.run("turn", TIME_BUDGET, report)


if __name__ == "__main__":
    sys.exit(main())
