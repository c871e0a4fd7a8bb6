"""Snapshot and restore of a session holding a 1,000,000-row DataFrame, beside re-running its cells.

Run from the project root: ``.venv/bin/python benchmarks/snapshot.py``. The script starts its
own sandboxd (a warm pool of POOL_SIZE) in a temporary data folder, writes a generated CSV of
ROWS sales (fixed seed) to data/sales.csv in a sandbox, and runs CELLS there: pandas reads it,
derives columns and summarises it, scikit-learn fits a model on a sample. It snapshots that
sandbox RUNS times; then, RUNS times each and interleaved, replays the cells in a fresh sandbox
already holding the CSV (the baseline) and restores the snapshot until its first cell answers,
checking each time that every variable came back whole. Stages are seen by watching the
workdirs, and the kernel's part is timed again alone. It prints a Markdown table of figures,
baseline and target, and writes it to benchmarks/results/snapshot.md. Every sandbox, snapshot
and process it makes is removed on exit, on error and on Ctrl-C.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import platform
import random
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import harness  # noqa: E402
from benchmarks.harness import load_average, step  # noqa: E402
from benchmarks.sandbox import (  # noqa: E402
    TEMPLATE_PYTHON,
    expect,
    isolation_driver,
    percentile,
    sandboxd,
    wait_for_idle_sandboxes,
)
from sandboxes import Execution, Sandbox, ServiceUnavailable, SnapshotInfo  # noqa: E402
from sandboxes.kernels.kernel import in_own_namespace  # noqa: E402
from sandboxes.server.snapshots import kernel_state  # noqa: E402
from sandboxes.server.snapshots.archive import WORKDIR_PREFIX, ArchiveReader  # noqa: E402
from sandboxes.server.snapshots.state_cells import STATE_DIR, STATE_NAMESPACE  # noqa: E402
from sandboxes.server.snapshots.store import LocalSnapshotStore  # noqa: E402
from tests.sandboxd_process import SandboxdProcess  # noqa: E402

POOL_SIZE = 2
RUNS = 5
STAGE_RUNS = 3
POLL_SECONDS = 0.002
ROWS = 1_000_000
SEED = 20261129
CSV_PATH = "data/sales.csv"
STATE_FILE = "bench-state.pkl"  # the snapshot's namespace file, uploaded to time its loading
STATE_PATH = f"/home/user/{STATE_FILE}"

# Target.
RESTORE_SPEEDUP = 5.0

TIME_BUDGET = 300  # hard stop (seconds) so a hung kernel cannot hold the machine

CATEGORIES = [
    "grocery",
    "electronics",
    "clothing",
    "home",
    "beauty",
    "sports",
    "toys",
    "books",
    "garden",
    "office",
    "pets",
    "automotive",
]

# The analysis whose state is snapshotted, one string per cell, as a user (or the model) wrote it.
CELLS = [
    (
        "`pd.read_csv` of the CSV, `parse_dates`",
        f'df = pd.read_csv("{CSV_PATH}", parse_dates=["ordered_at"])\ndf.shape',
    ),
    (
        "Derived columns: net, month, weekday, hour",
        """\
df["category"] = df["category"].astype("category")
df["net"] = df["amount"] * (1 - df["discount"])
df["month"] = df["ordered_at"].dt.to_period("M")
df["weekday"] = df["ordered_at"].dt.day_name().astype("category")
df["hour"] = df["ordered_at"].dt.hour
df.head()""",
    ),
    (
        "Group-bys by month and by customer, a pivot by weekday and hour",
        """\
monthly = (
    df.groupby(["month", "category"], observed=True)
    .agg(orders=("net", "size"), revenue=("net", "sum"), customers=("customer_id", "nunique"))
    .reset_index()
)
customers = df.groupby("customer_id").agg(
    orders=("net", "size"), spend=("net", "sum"), last_order=("ordered_at", "max")
)
by_hour = df.pivot_table(index="weekday", columns="hour", values="net", aggfunc="sum", observed=True)
monthly.tail()""",
    ),
    (
        "A scikit-learn Ridge fitted on a 200,000-row sample",
        """\
from sklearn.linear_model import Ridge

sample = df.sample(200_000, random_state=0)
features = pd.get_dummies(sample[["category", "weekday"]], dtype=float).assign(
    hour=sample["hour"], discount=sample["discount"]
)
model = Ridge(alpha=1.0).fit(features, sample["net"])
model.score(features, sample["net"])""",
    ),
]
FIRST_CELL = "len(df)"
# Every object the cells made, reduced to figures that must be identical after a restore.
CHECK = (
    'len(df), float(df["amount"].sum()), str(df["month"].max()), len(monthly),'
    ' float(customers["spend"].sum()), float(by_hour.sum().sum()), float(model.coef_.sum())'
)

KERNEL_STATE_SOURCE = Path(kernel_state.__file__).read_text()
FIGURES = "@@bench-figures@@ "


# ---- the data and the cells ----------------------------------------------------------------


def sales_csv() -> bytes:
    """ROWS orders over 2025 as CSV: a timestamp, a category, a customer id, an amount, a discount."""
    rng = random.Random(SEED)
    year = 1735689600  # 2025-01-01 UTC
    days = [time.strftime("%Y-%m-%d", time.gmtime(year + day * 86400)) for day in range(365)]
    clock = [f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}" for s in range(86400)]
    stamps = map(" ".join, zip(rng.choices(days, k=ROWS), rng.choices(clock, k=ROWS), strict=True))
    categories = rng.choices(CATEGORIES, weights=range(len(CATEGORIES), 0, -1), k=ROWS)
    customer_ids = map(str, rng.choices(range(1, 50_001), k=ROWS))
    amounts = (f"{math.exp(3.5 + 0.8 * rng.gauss()):.2f}" for _ in range(ROWS))
    discounts = rng.choices(["0.0", "0.05", "0.1", "0.15", "0.2"], weights=[6, 2, 2, 1, 1], k=ROWS)
    rows = map(",".join, zip(stamps, categories, customer_ids, amounts, discounts, strict=True))
    return ("ordered_at,category,customer_id,amount,discount\n" + "\n".join(rows) + "\n").encode()


def run_cell(sandbox: Sandbox, code: str) -> Execution:
    execution = sandbox.run_code(code)
    if execution.error is not None:
        raise RuntimeError(f"cell failed: {execution.error}\n{execution.error.traceback}\n{code}")
    return execution


def run_cells(sandbox: Sandbox) -> list[float]:
    """Milliseconds each cell of CELLS took, run in order."""
    samples = []
    for _, cell in CELLS:
        start = time.perf_counter()
        run_cell(sandbox, cell)
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def checksum(sandbox: Sandbox) -> str:
    return str(run_cell(sandbox, CHECK).text)


def in_kernel(sandbox: Sandbox, body: str) -> dict[str, Any]:
    """Run ``body`` after kernel_state's source, in a namespace of its own as sandboxd runs it;
    ``body`` fills the dict ``figures``, which comes back."""
    code = f"{KERNEL_STATE_SOURCE}\nfigures = {{}}\n{body}\nprint({FIGURES!r} + json.dumps(figures))"
    stdout = run_cell(sandbox, in_own_namespace(code, STATE_NAMESPACE)).stdout
    if kernel_state.REPORT_PREFIX + '{"error"' in stdout:
        raise RuntimeError(f"kernel_state failed in the kernel: {stdout[-2000:]}")
    for line in stdout.splitlines():
        if line.startswith(FIGURES):
            return dict(json.loads(line.removeprefix(FIGURES)))
    raise RuntimeError(f"the kernel sent no figures: {stdout[-2000:]}")


# ---- watching a workdir -------------------------------------------------------------------


@contextlib.contextmanager
def watching(workdirs: list[Path], *, csv_bytes: int) -> Iterator[dict[str, float]]:
    """While the ``with`` block runs, poll ``workdirs`` (as sandboxd sees them) for the files a
    snapshot or a restore makes there, noting when each event is first seen (perf_counter):
    ``csv`` (the CSV's file made), ``csv_full`` (it holds ``csv_bytes``), ``state`` (the
    namespace's pipe made), ``state_gone`` (removed)."""
    events: dict[str, float] = {}
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set():
            now = time.perf_counter()
            csv_sizes, pipes = [], []
            for workdir in workdirs:
                with contextlib.suppress(OSError):
                    csv_sizes.append((workdir / CSV_PATH).stat().st_size)
                with contextlib.suppress(OSError):
                    pipes += os.listdir(workdir / STATE_DIR)
            for name, present in (("csv", bool(csv_sizes)), ("state", bool(pipes))):
                if present:
                    events.setdefault(name, now)
                elif name in events:
                    events.setdefault(f"{name}_gone", now)
            if csv_sizes and max(csv_sizes) >= csv_bytes:
                events.setdefault("csv_full", now)
            time.sleep(POLL_SECONDS)

    thread = threading.Thread(target=poll, name="workdir-watch", daemon=True)
    thread.start()
    try:
        yield events
    finally:
        stop.set()
        thread.join()


def timeline(start: float, events: dict[str, float], end: float) -> dict[str, float]:
    """The events in milliseconds after ``start`` (``request``), with ``returned`` at ``end``
    and ``first_file`` at whichever file came first."""
    marks = {name: (at - start) * 1000 for name, at in events.items()}
    marks.update(request=0.0, returned=(end - start) * 1000)
    made = [marks[name] for name in ("csv", "state") if name in marks]
    if made:
        marks["first_file"] = min(made)
    return marks


# ---- measurements --------------------------------------------------------------------------


@dataclass
class Replay:
    create_ms: float
    upload_ms: float
    cell_ms: list[float]

    @property
    def cells_ms(self) -> float:
        return sum(self.cell_ms)

    @property
    def total_ms(self) -> float:
        """Create → last cell done, leaving out the upload (a restore's files come with it)."""
        return self.create_ms + self.cells_ms


@dataclass
class Restore:
    restore_ms: float
    first_cell_ms: float  # restore + FIRST_CELL answered
    timeline: dict[str, float]  # watched in the workdirs


@dataclass
class Snapshot:
    snapshot_ms: float
    timeline: dict[str, float]  # watched in the workdir


@dataclass
class KernelStages:
    import_ms: list[float]
    unpickle_ms: list[float]
    save_ms: list[float]
    modules: list[str]  # imported by the unpickling


@dataclass
class Figures:
    csv_bytes: int
    snapshot_bytes: int
    namespace_bytes: int
    files_bytes: int
    snapshots: list[Snapshot]
    replays: list[Replay]
    restores: list[Restore]
    kernel: KernelStages
    driver: str


# (what, from event, to event) in a timeline.
RESTORE_STAGES = [
    (
        "Request → first file made: HTTP, snapshot file opened, a pooled sandbox taken",
        "request",
        "first_file",
    ),
    ("Workdir files written out (the CSV), checksum checked", "csv", "csv_full"),
    (
        "Namespace streamed through a pipe, checksummed, as the kernel loads it (imports, unpickling)",
        "state",
        "state_gone",
    ),
    ("Pipe removed → `Sandbox.restore()` returned", "state_gone", "returned"),
    ("`Sandbox.restore()` returned", "request", "returned"),
]
SNAPSHOT_STAGES = [
    ("Request → the namespace's pipe made: HTTP, the contexts locked", "request", "state"),
    (
        "Namespace pickled by the kernel through the pipe, copied into the snapshot, checksummed",
        "state",
        "state_gone",
    ),
    ("Workdir files (the CSV) copied in, manifest, the file stored", "state_gone", "returned"),
    ("`sandbox.snapshot()` returned", "request", "returned"),
]


@contextlib.contextmanager
def killed_after(sandbox: Sandbox) -> Iterator[Sandbox]:
    try:
        yield sandbox
    finally:
        try:
            with contextlib.suppress(ServiceUnavailable):  # sandboxd stopped (Ctrl-C reaches it too)
                sandbox.kill()
        finally:
            sandbox.close()


class Session:
    """One sandboxd and what the benchmark made on it; ``delete_snapshots`` removes the snapshots."""

    def __init__(self, server: SandboxdProcess) -> None:
        self.server = server
        self.live = 0  # kernels of sandboxes kept open across timed runs
        self.snapshots: list[str] = []
        self.workdirs = server.view(server.data_dir / "sandboxes")

    def ready_pool(self) -> None:
        """Wait until the pool is full and idle, so each timed run starts from the same place."""
        wait_for_idle_sandboxes(self.server, POOL_SIZE + self.live)

    def create(self) -> contextlib.AbstractContextManager[Sandbox]:
        return killed_after(Sandbox.create(url=self.server.url, token=self.server.token))

    def restored(self, snapshot_id: str) -> contextlib.AbstractContextManager[Sandbox]:
        return killed_after(Sandbox.restore(snapshot_id, url=self.server.url, token=self.server.token))

    def snapshot(self, sandbox: Sandbox) -> SnapshotInfo:
        info = sandbox.snapshot()
        self.snapshots.append(info.snapshot_id)
        if info.unsaved:
            raise RuntimeError(f"the snapshot left variables out: {info.unsaved}")
        return info

    def delete_snapshot(self, snapshot_id: str) -> None:
        self.snapshots.remove(snapshot_id)
        Sandbox.delete_snapshot(snapshot_id, url=self.server.url, token=self.server.token)

    def delete_snapshots(self) -> None:
        for snapshot_id in list(self.snapshots):
            with contextlib.suppress(Exception):  # gone with sandboxd's data folder anyway
                self.delete_snapshot(snapshot_id)

    def snapshot_file(self, snapshot_id: str) -> contextlib.AbstractContextManager[Path]:
        return LocalSnapshotStore(self.server.data_dir / "snapshots").fetch(snapshot_id)

    def pooled_workdirs(self, taken: set[str]) -> list[Path]:
        """The workdirs of the pool: all but those of the sandboxes in ``taken``."""
        return [self.workdirs / name for name in os.listdir(self.workdirs) if name not in taken]


def timed_snapshot(session: Session, source: Sandbox, csv_bytes: int) -> Snapshot:
    """One snapshot of ``source``, watched in its workdir, then deleted."""
    with watching([session.workdirs / source.sandbox_id], csv_bytes=csv_bytes) as events:
        start = time.perf_counter()
        info = session.snapshot(source)
        end = time.perf_counter()
    session.delete_snapshot(info.snapshot_id)
    return Snapshot((end - start) * 1000, timeline(start, events, end))


def replay(session: Session, csv: bytes, expected: str) -> Replay:
    session.ready_pool()
    start = time.perf_counter()
    with session.create() as sandbox:
        created = time.perf_counter()
        sandbox.files.write(CSV_PATH, csv)
        uploaded = time.perf_counter()
        cell_ms = run_cells(sandbox)
        expect(checksum(sandbox), expected, "the replayed state")
    return Replay((created - start) * 1000, (uploaded - created) * 1000, cell_ms)


def restore(session: Session, source: Sandbox, snapshot_id: str, csv_bytes: int, expected: str) -> Restore:
    session.ready_pool()
    with watching(session.pooled_workdirs({source.sandbox_id}), csv_bytes=csv_bytes) as events:
        start = time.perf_counter()
        with session.restored(snapshot_id) as sandbox:
            restored = time.perf_counter()
            expect(run_cell(sandbox, FIRST_CELL).text, str(ROWS), "len(df) after a restore")
            answered = time.perf_counter()
            expect(checksum(sandbox), expected, "the restored state")
    marks = timeline(start, events, restored)
    return Restore((restored - start) * 1000, (answered - start) * 1000, marks)


def namespace_file(session: Session, snapshot_id: str, scratch: Path) -> tuple[Path, dict[str, int]]:
    """The snapshot's namespace file, copied out to ``scratch``; the size of each member."""
    scratch.mkdir(parents=True, exist_ok=True)
    state = scratch / "state.pkl"
    with session.snapshot_file(snapshot_id) as path, ArchiveReader(path) as reader:
        (context,) = reader.manifest["contexts"]
        reader.copy_to(f"contexts/{context['id']}.pkl", os.open(state, os.O_WRONLY | os.O_CREAT, 0o600))
        return state, {name: member.size for name, member in reader.members.items()}


def needed_modules(session: Session, state: Path) -> list[str]:
    """The modules a fresh pooled kernel imports to unpickle the namespace file: its objects'
    classes live there (scikit-learn's, for the model), and unpickling imports them."""
    session.ready_pool()
    with session.create() as sandbox, state.open("rb") as stream:
        sandbox.files.write(STATE_FILE, stream)
        body = f"import sys\nbefore = set(sys.modules)\nload({STATE_PATH!r})\n"
        body += "figures['modules'] = sorted(set(sys.modules) - before)"
        return list(in_kernel(sandbox, body)["modules"])


def kernel_load(session: Session, state: Path, modules: list[str], expected: str) -> tuple[float, float]:
    """Milliseconds a fresh pooled kernel takes to import ``modules``, then to unpickle the
    namespace file (kernel_state.load, as a restore runs it); both timed inside the kernel."""
    session.ready_pool()
    with session.create() as sandbox, state.open("rb") as stream:
        sandbox.files.write(STATE_FILE, stream)
        body = f"""\
import importlib, time
start = time.perf_counter()
for name in {modules!r}:
    try:
        importlib.import_module(name)
    except Exception:
        pass
imported = time.perf_counter()
load({STATE_PATH!r})
figures.update(imports=imported - start, unpickle=time.perf_counter() - imported)"""
        figures = in_kernel(sandbox, body)
        expect(checksum(sandbox), expected, "the namespace loaded by hand")
    return figures["imports"] * 1000, figures["unpickle"] * 1000


def kernel_save(sandbox: Sandbox) -> float:
    """Milliseconds the kernel takes to pickle its namespace (kernel_state.save, as a snapshot
    runs it, into /dev/null rather than sandboxd's pipe), timed inside the kernel."""
    body = """\
import time
start = time.perf_counter()
save("/dev/null", 1 << 40)
figures["save"] = time.perf_counter() - start"""
    return float(in_kernel(sandbox, body)["save"]) * 1000


def measure(server: SandboxdProcess, scratch: Path) -> Figures:
    step(f"generating {ROWS:,} rows of CSV")
    csv = sales_csv()
    session = Session(server)
    try:
        step("building the session to snapshot")
        with session.create() as source:
            session.live = 1
            source.files.write(CSV_PATH, csv)
            run_cells(source)
            expected = checksum(source)
            kept = session.snapshot(source)  # to restore from
            snapshot_id = kept.snapshot_id
            state, members = namespace_file(session, snapshot_id, scratch)
            step(f"{RUNS} snapshots")
            snapshots = [timed_snapshot(session, source, len(csv)) for _ in range(RUNS)]
            step(f"{RUNS} replays and {RUNS} restores, interleaved")
            replays, restores = [], []
            for _ in range(RUNS):
                replays.append(replay(session, csv, expected))
                restores.append(restore(session, source, snapshot_id, len(csv), expected))
            step(f"the kernel's part of a restore and a snapshot, {STAGE_RUNS} times each")
            modules = needed_modules(session, state)
            loads = [kernel_load(session, state, modules, expected) for _ in range(STAGE_RUNS)]
            saves = [kernel_save(source) for _ in range(STAGE_RUNS)]
    finally:
        session.delete_snapshots()
    return Figures(
        csv_bytes=len(csv),
        snapshot_bytes=kept.size,
        namespace_bytes=sum(size for name, size in members.items() if name.startswith("contexts/")),
        files_bytes=sum(size for name, size in members.items() if name.startswith(WORKDIR_PREFIX)),
        snapshots=snapshots,
        replays=replays,
        restores=restores,
        kernel=KernelStages(
            import_ms=[imports for imports, _ in loads],
            unpickle_ms=[unpickle for _, unpickle in loads],
            save_ms=saves,
            modules=modules,
        ),
        driver=isolation_driver(server),
    )


# ---- report --------------------------------------------------------------------------------


def seconds(samples: list[float]) -> str:
    return f"{percentile(samples, 50) / 1000:.2f} s (max {max(samples) / 1000:.2f} s)"


def mib(size: int) -> str:
    return f"{size / (1 << 20):.1f} MiB"


def row(measure: str, value: str, baseline: str = "", target: str = "", passed: bool | None = None) -> str:
    verdict = "" if passed is None else "pass" if passed else "**FAIL**"
    return f"| {measure} | {value} | {baseline} | {target} | {verdict} |"


def speedup(figures: Figures) -> float:
    replayed = percentile([r.total_ms for r in figures.replays], 50)
    return replayed / percentile([r.first_cell_ms for r in figures.restores], 50)


def table(figures: Figures) -> str:
    replays, restores = figures.replays, figures.restores
    ratio = speedup(figures)
    verdict = "pass" if ratio >= RESTORE_SPEEDUP else "FAIL"
    rows = [
        f"restore (incl. first cell) vs replay: {ratio:.1f}× faster"
        f" — target ≥ {RESTORE_SPEEDUP:.0f}×: {verdict}",
        "",
        "| Measure, p50 (max) | Snapshot / restore | Replaying the cells (baseline) | Target | Result |",
        "|---|---|---|---|---|",
        row(
            "Restore → first cell (`len(df)`) answered, vs create → last cell done",
            seconds([r.first_cell_ms for r in restores]),
            seconds([r.total_ms for r in replays]),
            f"≥ {RESTORE_SPEEDUP:.0f}× faster",
            ratio >= RESTORE_SPEEDUP,
        ),
        row(
            "`Sandbox.restore()` returned, vs the cells alone",
            seconds([r.restore_ms for r in restores]),
            seconds([r.cells_ms for r in replays]),
        ),
        row("`sandbox.snapshot()` returned", seconds([s.snapshot_ms for s in figures.snapshots])),
        row(
            "Writing the CSV into the replay's sandbox (not counted)",
            "",
            seconds([r.upload_ms for r in replays]),
        ),
        row(
            "Snapshot size",
            f"{mib(figures.snapshot_bytes)} (namespace {mib(figures.namespace_bytes)},"
            f" files {mib(figures.files_bytes)})",
            f"the CSV: {mib(figures.csv_bytes)}",
        ),
    ]
    return "\n".join(rows)


def stage_row(name: str, samples: list[float], starts: list[float] | None = None) -> str:
    at = "" if starts is None else f"{percentile(starts, 50):.0f} ms | "
    return f"| {name} | {at}{percentile(samples, 50):.0f} ms | {max(samples):.0f} ms |"


def timeline_table(
    title: str, stages: list[tuple[str, str, str]], timelines: list[dict[str, float]]
) -> list[str]:
    """Each stage's start (after the request) and length, p50 over ``timelines``; stages that
    overlap show it in their starts."""
    rows = [f"| {title} | starts at, p50 | took, p50 | took, max |", "|---|---|---|---|"]
    for name, begin, end in stages:
        missing = [event for event in (begin, end) if any(event not in marks for marks in timelines)]
        if missing:
            raise RuntimeError(f"the workdir watch missed {missing} for {name!r}")
        took = [marks[end] - marks[begin] for marks in timelines]
        rows.append(stage_row(name, took, [marks[begin] for marks in timelines]))
    return rows


def stages(figures: Figures) -> str:
    kernel = figures.kernel
    packages = sorted(
        {name.split(".")[0] for name in kernel.modules if not name.startswith("_")}
        - set(sys.stdlib_module_names)
    )
    cells = ["| Replayed cell | p50 | max |", "|---|---|---|"]
    cells += [
        stage_row(name, [r.cell_ms[index] for r in figures.replays]) for index, (name, _) in enumerate(CELLS)
    ]
    restore = timeline_table(
        "Stage of a restore, seen from its workdir", RESTORE_STAGES, [r.timeline for r in figures.restores]
    )
    snapshot = timeline_table(
        "Stage of a snapshot, seen from its workdir", SNAPSHOT_STAGES, [s.timeline for s in figures.snapshots]
    )
    alone = [
        "| In a fresh pooled kernel, timed inside it | p50 | max |",
        "|---|---|---|",
    ]
    if kernel.modules:
        imported = f"{len(kernel.modules)} modules ({', '.join(packages)})"
        alone.append(
            stage_row(f"Importing what unpickling the namespace imports: {imported}", kernel.import_ms)
        )
    else:
        alone.append(
            "| Importing what unpickling the namespace needs | none left: the pool's warm-up did | |"
        )
    alone += [
        stage_row(
            "Unpickling the namespace (`kernel_state.load`), those modules imported", kernel.unpickle_ms
        ),
        stage_row(
            "Pickling it again, into /dev/null (`kernel_state.save`, the session's kernel)", kernel.save_ms
        ),
    ]
    return "\n\n".join("\n".join(part) for part in (cells, restore, snapshot, alone))


def header(load_at_start: str) -> str:
    return (
        f"Snapshot benchmark, {time.strftime('%Y-%m-%d %H:%M')}, {platform.machine()},"
        f" {os.cpu_count()} CPUs, load average {load_at_start} at start, {load_average()} at end."
        f" Pool size {POOL_SIZE}; a session holding a {ROWS:,}-row DataFrame;"
        f" {RUNS} snapshots, then {RUNS} replays and {RUNS} restores interleaved;"
        f" the kernel's part timed alone {STAGE_RUNS} times."
    )


def footnote(driver: str) -> str:
    return (
        f"sandboxd: the {driver} driver (its default here), timed through the SDK over HTTP; each"
        " timed create or restore starts with the warm pool full and idle. Baseline: the same"
        f" {len(CELLS)} cells run in a fresh pooled sandbox that already holds the CSV; its upload"
        " is not counted, as a restore brings its files with it. Every restore and replay is"
        " checked: `len(df)` and figures from each variable equal the original's. Stages are"
        f" seen by polling the workdir every {POLL_SECONDS * 1000:.0f} ms for the files sandboxd"
        " and the kernel write and remove there (where two overlap, their starts show it); the"
        " last table runs kernel_state.py as sandboxd does, in a fresh sandbox given the"
        " snapshot's namespace file."
    )


# ---- main ----------------------------------------------------------------------------------


def report(folder: Path, load_at_start: str) -> str:
    step(f"sandboxd with a pool of {POOL_SIZE}")
    with sandboxd(folder / "sandboxd", POOL_SIZE) as server:
        figures = measure(server, folder / "scratch")
    return f"{header(load_at_start)}\n\n{table(figures)}\n\n{stages(figures)}\n\n{footnote(figures.driver)}\n"


def main() -> int:
    if not TEMPLATE_PYTHON.exists():
        print(f"the code-interpreter template is not built ({TEMPLATE_PYTHON}); run `make template`")
        return 2
    return harness.run("snapshot", TIME_BUDGET, report)


if __name__ == "__main__":
    sys.exit(main())
