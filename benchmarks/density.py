"""How many sessions one machine holds: the memory of an idle live session, a thousand paused
sessions beside twenty active ones, and how fast a paused one answers again.

- Memory: ten sandboxes that each loaded pandas and a small DataFrame, then idle; the kernels'
  RSS, PSS (shared pages counted once among the processes that share them) and USS (pages no
  other process has), per session, with the fork server's processes counted too (its zygote,
  whose pages the kernels share, and each kernel's pid 1); beside, in this run, the same ten
  sessions with kernels started by bubblewrap (SANDBOXD_FORK_SERVER=false) and a bare Python
  that imported the same libraries.
- Density: 1,000 paused sessions (``--quick``: 200), made from one session's snapshot restored
  paused, while 20 active sandboxes run a cell every second; sandboxd's health, the host's
  available memory, and the disk a paused session takes.
- Resume: a paused session's first ``print`` after resume, one a second (arrivals do not wait
  for the warm pool), beside restoring the same state from its snapshot into a new sandbox
  (what a session did before pausing) and a pooled create's first result.
- Namespace size: pause, then resume → first result, of a session holding 10 MB, 100 MB and
  1 GB (not with ``--quick``) in one array: its first cell does not use the array, which is
  loaded later (deferred); then the first cell that does.

Run from the project root: ``.venv/bin/python benchmarks/density.py`` (``--quick``). Prints a
Markdown table and writes benchmarks/results/density.md; every process it starts is stopped.
"""

from __future__ import annotations

import contextlib
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from benchmarks import harness  # noqa: E402
from benchmarks.harness import load_average, step  # noqa: E402
from sandboxes import Sandbox, SandboxError  # noqa: E402
from sandboxes.server.pool_sizing import memory_available  # noqa: E402
from tests.sandboxd_process import SandboxdProcess  # noqa: E402

QUICK = "--quick" in sys.argv[1:]
PAUSED = 200 if QUICK else 1000
ACTIVE = 20
IDLE_SESSIONS = 10
RESUMES = 10 if QUICK else 20
FIRST_CELL = (
    "import pandas as pd, numpy as np\ndf = pd.DataFrame({'a': np.arange(1000), 'b': np.arange(1000) * 2.0})"
)
TARGET_RESUME_MS = 300.0
TARGET_IDLE_MIB = 60.0
TIME_BUDGET = 1500
MIB = 1 << 20


def sandboxd(folder: Path, fork_server: bool = True) -> contextlib.AbstractContextManager[SandboxdProcess]:
    settings = {
        "SANDBOXD_POOL_SIZE": "2",
        "SANDBOXD_POOL_MAX": "4",
        "SANDBOXD_MAX_SANDBOXES": str(ACTIVE + IDLE_SESSIONS + 10),
        "SANDBOXD_DEFAULT_TTL": "3600",
        "SANDBOXD_IDLE_PAUSE": "3600",  # the benchmark pauses on purpose
        "SANDBOXD_MEMORY_LIMIT": "2G",
        "SANDBOXD_SNAPSHOT_MAX_BYTES": "2G",
        "SANDBOXD_FORK_SERVER": "true" if fork_server else "false",
    }
    return harness.sandboxd(folder, settings)


# Memory ---------------------------------------------------------------------------------------


def memory_of(pids: list[int]) -> dict[str, int]:
    """Summed RSS, PSS and USS (bytes) of ``pids``, from smaps_rollup."""
    total = {"rss": 0, "pss": 0, "uss": 0}
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = {}
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
                name, value, *_ = line.split()
                fields[name.rstrip(":")] = int(value) * 1024
            total["rss"] += fields.get("Rss", 0)
            total["pss"] += fields.get("Pss", 0)
            total["uss"] += fields.get("Private_Clean", 0) + fields.get("Private_Dirty", 0)
    return total


def kernel_processes(server: SandboxdProcess) -> list[int]:
    """Every process below this run's sandboxd: its kernels (and bubblewrap's processes), or the
    fork server's zygote and what it forked; not the other sandboxds this machine may run."""
    children: dict[int, list[int]] = {}
    for status in Path("/proc").glob("[0-9]*/status"):
        with contextlib.suppress(OSError, ValueError, StopIteration):
            lines = status.read_text().splitlines()
            parent = int(next(line for line in lines if line.startswith("PPid:")).split()[1])
            children.setdefault(parent, []).append(int(status.parent.name))
    assert server.process is not None
    found, waiting = [], list(children.get(server.process.pid, []))
    while waiting:
        pid = waiting.pop()
        found.append(pid)
        waiting.extend(children.get(pid, []))
    return sorted(found)


def pool_ready(server: SandboxdProcess) -> int:
    return sum(stats(server)["pool"]["ready"].values())


def stats(server: SandboxdProcess) -> dict:
    headers = {"Authorization": f"Bearer {server.token}"}
    return httpx.get(f"{server.url}/stats", headers=headers, timeout=30).json()


def settle(server: SandboxdProcess, ready: int = 2) -> None:
    deadline = time.monotonic() + 180
    while pool_ready(server) < ready:
        if time.monotonic() > deadline:
            raise RuntimeError("the pool never filled")
        time.sleep(0.3)
    time.sleep(3)


def idle_session_memory(server: SandboxdProcess, kw: dict) -> tuple[dict[str, float], list[Sandbox]]:
    step(f"memory: {IDLE_SESSIONS} idle live sessions (load {load_average()})")
    settle(server)
    before, available_before = memory_of(kernel_processes(server)), memory_available()
    sessions = []
    for _ in range(IDLE_SESSIONS):
        sandbox = Sandbox.create(request_timeout=120, **kw)
        sandbox.run_code(FIRST_CELL, timeout=120)
        sessions.append(sandbox)
    settle(server)
    after, available_after = memory_of(kernel_processes(server)), memory_available()
    per = {key: (after[key] - before[key]) / IDLE_SESSIONS / MIB for key in before}
    per["available"] = (available_before - available_after) / IDLE_SESSIONS / MIB
    return per, sessions


def bare_python_memory() -> dict[str, float]:
    python = harness.template_python()
    code = "import numpy, pandas, IPython, ipykernel, sys; print('ready', flush=True); sys.stdin.read()"
    process = subprocess.Popen([str(python), "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert process.stdout is not None and process.stdout.readline().startswith(b"ready")
        measured = memory_of([process.pid])
    finally:
        process.kill()
        process.wait()
    return {key: value / MIB for key, value in measured.items()}


# Density and resume ---------------------------------------------------------------------------


def make_paused(server: SandboxdProcess, kw: dict, snapshot_id: str) -> tuple[list[str], float]:
    step(f"density: {PAUSED} paused sessions (load {load_average()})")
    started = time.perf_counter()
    ids = [
        Sandbox.restore(snapshot_id, paused=True, metadata={"bench": "paused"}, **kw).sandbox_id
        for _ in range(PAUSED)
    ]
    return ids, (time.perf_counter() - started) * 1000 / PAUSED


class Active:
    """``ACTIVE`` sandboxes running a small cell every second, each in its own thread."""

    def __init__(self, kw: dict) -> None:
        self.kw = kw
        self.sandboxes = [Sandbox.create(request_timeout=120, **kw) for _ in range(ACTIVE)]
        self.stop = threading.Event()
        self.cells = 0
        self.failures: list[str] = []
        self.threads = [threading.Thread(target=self._work, args=(s,), daemon=True) for s in self.sandboxes]

    def __enter__(self) -> Active:
        for thread in self.threads:
            thread.start()
        return self

    def _work(self, sandbox: Sandbox) -> None:
        while not self.stop.is_set():
            try:
                if sandbox.run_code("sum(range(100_000))", timeout=60).text == "4999950000":
                    self.cells += 1
            except SandboxError as exc:
                self.failures.append(str(exc))
            self.stop.wait(1.0)

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=60)
        for sandbox in self.sandboxes:
            with contextlib.suppress(SandboxError):
                sandbox.kill()
            sandbox.close()


def timed_resumes(paused_ids: list[str], kw: dict) -> list[float]:
    """One resume a second, not waiting for the pool: connect → first printed line."""
    chosen = random.Random(7).sample(paused_ids, RESUMES)
    latencies: list[float] = []
    lock = threading.Lock()

    def resume(sandbox_id: str) -> None:
        started = time.perf_counter()
        sandbox = Sandbox.connect(sandbox_id, **kw)
        printed = sandbox.run_code("print(len(df))", timeout=60).stdout
        elapsed = (time.perf_counter() - started) * 1000
        if printed == "1000\n":
            with lock:
                latencies.append(elapsed)
        sandbox.close()

    threads = []
    for sandbox_id in chosen:
        thread = threading.Thread(target=resume, args=(sandbox_id,), daemon=True)
        thread.start()
        threads.append(thread)
        time.sleep(1.0)
    for thread in threads:
        thread.join(timeout=120)
    return latencies


def baseline_restores(snapshot_id: str, kw: dict, server: SandboxdProcess) -> tuple[list[float], list[float]]:
    """Restoring the state into a new sandbox (as before pausing), and a pooled create's first
    result, each with a full pool."""
    restores, creates = [], []
    for _ in range(5):
        settle(server)
        started = time.perf_counter()
        sandbox = Sandbox.restore(snapshot_id, **kw)
        sandbox.run_code("print(len(df))", timeout=60)
        restores.append((time.perf_counter() - started) * 1000)
        sandbox.kill()
        sandbox.close()
        settle(server)
        started = time.perf_counter()
        sandbox = Sandbox.create(**kw)
        sandbox.run_code("1+1", timeout=60)
        creates.append((time.perf_counter() - started) * 1000)
        sandbox.kill()
        sandbox.close()
    return restores, creates


def resume_by_size(server: SandboxdProcess, kw: dict) -> list[tuple[str, float, float, float]]:
    """(size, pause ms, resume → first result ms, then the first cell using the array ms) for a
    session holding that much in one array."""
    sizes = [("10 MB", 10), ("100 MB", 100)] + ([] if QUICK else [("1 GB", 1000)])
    rows = []
    for label, megabytes in sizes:
        settle(server)
        sandbox = Sandbox.create(request_timeout=120, **kw)
        sandbox.run_code(
            f"import numpy as np\nblob = np.ones({megabytes * 1_000_000 // 8})\nn = 1", timeout=120
        )
        started = time.perf_counter()
        sandbox.pause()
        paused_ms = (time.perf_counter() - started) * 1000
        settle(server)
        started = time.perf_counter()
        sandbox.run_code("print(n)", timeout=120)
        resumed_ms = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        sandbox.run_code("print(blob[-1])", timeout=120)
        rows.append((label, paused_ms, resumed_ms, (time.perf_counter() - started) * 1000))
        sandbox.kill()
        sandbox.close()
    return rows


def paused_disk(server: SandboxdProcess) -> int:
    return sum(path.stat().st_size for path in server.view(server.data_dir / "paused").glob("*.json"))


def report(folder: Path, load_at_start: str) -> str:
    bare = bare_python_memory()
    with sandboxd(folder / "started", fork_server=False) as server:
        started, sessions = idle_session_memory(server, {"url": server.url, "token": server.token})
        for sandbox in sessions:
            sandbox.kill()
            sandbox.close()
    with sandboxd(folder / "density") as server:
        kw = {"url": server.url, "token": server.token}
        per_session, idle = idle_session_memory(server, kw)
        source = idle[0]
        snapshot = source.snapshot()
        for sandbox in idle:
            sandbox.kill()
            sandbox.close()
        paused_ids, paused_ms_each = make_paused(server, kw, snapshot.snapshot_id)
        step(f"{ACTIVE} active sandboxes, then resumes (load {load_average()})")
        with Active(kw) as active:
            settle(server)
            resumes = timed_resumes(paused_ids, kw)
            health = stats(server)
            available = memory_available()
        restores, creates = baseline_restores(snapshot.snapshot_id, kw, server)
        sizes = resume_by_size(server, kw)
        records = paused_disk(server)

    p50 = statistics.median(resumes) if resumes else float("nan")
    idle_pss = per_session["pss"]
    lines = [
        f"Load average at start: {load_at_start}, at end: {load_average()}. The default driver"
        " (bubblewrap, kernels forked by the fork server); each session's first cell loads pandas"
        " and a 1,000-row DataFrame.",
        "",
        "| Measure | This run | Baseline (same run) | Target | Result |",
        "|---|---|---|---|---|",
        f"| Paused sessions held, beside {ACTIVE} active"
        f" | {PAUSED} made paused; after {RESUMES} resumes {health['paused']} paused,"
        f" {health['sandboxes']} running"
        f" ({active.cells} cells ran, {len(active.failures)} failed) | | ≥ 1,000 + 20"
        f" | {'pass' if PAUSED >= 1000 else 'not measured at 1,000 (--quick)'} |",
        f"| Host memory available with them | {available / (1 << 30):.1f} GiB | | | |",
        f"| Resume → first result, p50 (one a second, pool not waited for) | {p50:.0f} ms"
        f" (p90 {sorted(resumes)[int(0.9 * (len(resumes) - 1))]:.0f} ms, {len(resumes)} of {RESUMES})"
        f" | restore into a new sandbox {statistics.median(restores):.0f} ms;"
        f" pooled create → `1+1` {statistics.median(creates):.0f} ms"
        f" | ≤ {TARGET_RESUME_MS:g} ms | {'pass' if p50 <= TARGET_RESUME_MS else '**FAIL**'} |",
        f"| Idle live session, PSS | {idle_pss:.1f} MiB (RSS {per_session['rss']:.1f}, USS"
        f" {per_session['uss']:.1f}; MemAvailable fell {per_session['available']:.1f} MiB each)"
        f" | kernels started by bubblewrap: PSS {started['pss']:.1f} MiB (RSS {started['rss']:.1f},"
        f" MemAvailable fell {started['available']:.1f} MiB each);"
        f" bare Python with the same imports: PSS {bare['pss']:.1f} MiB (RSS {bare['rss']:.1f})"
        f" | ≤ {TARGET_IDLE_MIB:g} MiB | {'pass' if idle_pss <= TARGET_IDLE_MIB else '**FAIL**'} |",
        f"| Making one paused session from a snapshot | {paused_ms_each:.1f} ms | | | |",
        f"| Disk per paused session | its snapshot ({snapshot.size / 1024:.0f} KiB here) and a"
        f" {records / max(1, health['paused']):.0f}-byte record | | | |",
    ]
    for label, pause_ms, resume_ms, using_ms in sizes:
        lines.append(
            f"| Namespace of {label}: resume → first result (pause took {pause_ms:.0f} ms)"
            f" | {resume_ms:.0f} ms | first cell using the array: {using_ms:.0f} ms"
            f" | ≤ {TARGET_RESUME_MS:g} ms | {'pass' if resume_ms <= TARGET_RESUME_MS else '**FAIL**'} |"
        )
    for failure in active.failures[:5]:
        lines.append(f"\nactive cell failed: {failure}")
    lines.append(f"\nCPU cores: {os.cpu_count()}.")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(harness.run("density", TIME_BUDGET, report))
