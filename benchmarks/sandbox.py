"""sandboxd beside a bare ipykernel: create-to-first-result, run_code round trip and memory.

Run from the project root: ``.venv/bin/python benchmarks/sandbox.py``. The script starts its
own sandboxd processes (a warm pool of POOL_SIZE, then a pool of 0 for cold creates) in a
temporary data folder, and a bare jupyter_client + ipykernel from the code-interpreter
template's virtualenv (unsandboxed, tcp, no startup file) as the baseline. It prints a
Markdown table of figures, baselines and targets, and writes it to benchmarks/results/sandbox.md.
Every process it starts is stopped on exit, on error and on Ctrl-C.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import queue
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from jupyter_client import BlockingKernelClient, KernelManager  # noqa: E402
from jupyter_client.kernelspec import KernelSpecManager  # noqa: E402

from benchmarks import harness  # noqa: E402
from benchmarks.harness import load_average, step  # noqa: E402
from sandboxes import Sandbox, templates  # noqa: E402
from sandboxes.kernels.kernel import in_own_namespace  # noqa: E402
from tests.sandboxd_process import SandboxdProcess  # noqa: E402

TEMPLATE_PYTHON = ROOT / "var" / "templates" / "code-interpreter" / "venv" / "bin" / "python"

POOL_SIZE = 2
POOLED_CREATES = 20
COLD_CREATES = 5
BASELINE_STARTS = 3
EXECUTIONS = 1_000
WARMUP = 100
IMPORTS = "import pandas, numpy, matplotlib"
# What pooled kernels import while they wait (the template's warm.py): the idle baseline runs it too.
WARM_UP = in_own_namespace(templates.get("code-interpreter", Path()).warm_up_code, "__sandbox_warm_up__")

# Targets.
POOLED_CREATE_P50_MS = 150.0
ROUND_TRIP_RATIO = 1.5
SERVER_GROWTH_MIB = 10.0
KERNEL_GROWTH_MIB = 5.0

SETTLE_WINDOW = 0.3  # seconds with no kernel CPU use that count as "the pool is refilled"
SETTLE_TIMEOUT = 60.0
TIME_BUDGET = 300  # hard stop (seconds) so a hung kernel cannot hold the machine


# ---- /proc ---------------------------------------------------------------------------------


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/<pid>/stat from the state field on (the command name may hold spaces)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


def cpu_ticks(pid: int) -> int:
    fields = _stat_fields(pid)
    return int(fields[11]) + int(fields[12]) if fields else -1


def rss_mib(pid: int) -> float:
    """Resident memory (VmRSS) of one process, in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"process {pid} has no VmRSS (a zombie?)")


def cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
    except OSError:
        return []


def parents() -> dict[int, int]:
    """pid -> ppid for every process on the machine."""
    table = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat_fields(int(entry.name))
            if fields:
                table[int(entry.name)] = int(fields[1])
    return table


def ancestry(pid: int, table: dict[int, int], root: int) -> list[int] | None:
    """The chain pid, parent, ... up to ``root`` (excluded); None if ``root`` is not an ancestor."""
    chain = []
    while pid in table and pid != root:
        chain.append(pid)
        pid = table[pid]
    return chain if pid == root else None


def is_kernel(pid: int) -> bool:
    """The ipykernel python itself, not the bwrap processes around it."""
    return cmdline(pid)[1:3] == ["-m", "ipykernel_launcher"]


def kernel_pids(server_pid: int, holding: str | None = None) -> list[int]:
    """Kernel processes under ``server_pid``; with ``holding``, only the one whose workdir (seen
    through /proc/<pid>/root, the sandbox's own filesystem view) holds a file of that name."""
    table = parents()
    found = []
    for pid in table:
        if not ancestry(pid, table, server_pid) or not is_kernel(pid):
            continue
        if holding is None or Path(f"/proc/{pid}/root/home/user/{holding}").exists():
            found.append(pid)
    return sorted(found)


def running_pid(server: SandboxdProcess) -> int:
    """The sandboxd process id; raises if it has exited."""
    if server.process is None or server.process.poll() is not None:
        raise RuntimeError(f"sandboxd is not running:\n{server.read_log()[-2000:]}")
    return server.process.pid


def wait_for_idle_kernels(server: SandboxdProcess, count: int) -> list[int]:
    """Block until exactly ``count`` kernels run under the server and none used CPU for
    SETTLE_WINDOW seconds (a starting kernel is busy importing); return their pids."""
    deadline = time.monotonic() + SETTLE_TIMEOUT
    while time.monotonic() < deadline:
        pids = kernel_pids(running_pid(server))
        before = [cpu_ticks(p) for p in pids]
        time.sleep(SETTLE_WINDOW)
        if len(pids) == count and [cpu_ticks(p) for p in pids] == before:
            return pids
    raise TimeoutError(f"the pool did not settle at {count} idle kernels within {SETTLE_TIMEOUT:.0f}s")


# ---- statistics and timing -----------------------------------------------------------------


def percentile(samples: list[float], pct: int) -> float:
    if len(samples) == 1:
        return samples[0]
    return statistics.quantiles(samples, n=100, method="inclusive")[pct - 1]


def timed(action: Callable[[], object]) -> float:
    """Milliseconds ``action`` took."""
    start = time.perf_counter()
    action()
    return (time.perf_counter() - start) * 1000


def expect(value: object, wanted: object, what: str) -> None:
    if value != wanted:
        raise RuntimeError(f"{what}: expected {wanted!r}, got {value!r}")


# ---- baseline: a bare jupyter_client + ipykernel -------------------------------------------


@dataclass
class Baseline:
    start_to_result_ms: list[float]
    start_imports_to_result_ms: list[float]
    round_trip_ms: list[float]
    idle_rss_mib: float
    growth_mib: float


def write_kernel_spec(folder: Path) -> Path:
    """A kernelspec for the template's python; its own IPYTHONDIR/MPLCONFIGDIR keep it off ~/."""
    spec_dir = folder / "kernels" / "bare"
    spec_dir.mkdir(parents=True)
    spec = {
        "argv": [str(TEMPLATE_PYTHON), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "bare ipykernel",
        "language": "python",
        "env": {"IPYTHONDIR": str(folder / "ipython"), "MPLCONFIGDIR": str(folder / "matplotlib")},
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    return folder / "kernels"


def bare_execute(client: BlockingKernelClient, code: str) -> str | None:
    """Run ``code``; wait for idle and the shell reply; return the text/plain result."""
    msg_id = client.execute(code, store_history=True, allow_stdin=False)
    text = None
    while True:
        msg = client.iopub_channel.get_msg(timeout=60)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "execute_result":
            text = msg["content"]["data"].get("text/plain")
        elif msg["msg_type"] == "error":
            raise RuntimeError(f"{code!r} failed: {msg['content']['evalue']}")
        elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    while client.shell_channel.get_msg(timeout=60)["parent_header"].get("msg_id") != msg_id:
        pass
    return text


@contextlib.contextmanager
def bare_kernel(kernel_dirs: Path) -> Iterator[tuple[KernelManager, BlockingKernelClient]]:
    specs = KernelSpecManager(kernel_dirs=[str(kernel_dirs)], ensure_native_kernel=False)
    manager = KernelManager(kernel_name="bare", kernel_spec_manager=specs)
    manager.start_kernel(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = manager.blocking_client()
    try:
        client.start_channels()
        client.wait_for_ready(timeout=60)
        with contextlib.suppress(queue.Empty):
            while True:
                client.iopub_channel.get_msg(timeout=0.01)
        yield manager, client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def bare_start(kernel_dirs: Path, first_cells: list[str]) -> float:
    """Milliseconds from starting a kernel to the result of ``1+1`` after ``first_cells``."""
    start = time.perf_counter()
    with bare_kernel(kernel_dirs) as (_, client):
        for cell in first_cells:
            bare_execute(client, cell)
        expect(bare_execute(client, "1+1"), "2", "bare 1+1")
        return (time.perf_counter() - start) * 1000


def kernel_pid(manager: KernelManager) -> int:
    process = getattr(manager.provisioner, "process", None)
    if process is None:
        raise RuntimeError("the baseline kernel's provisioner exposes no process")
    return int(process.pid)


def measure_baseline(folder: Path) -> Baseline:
    step(f"bare ipykernel: {2 * BASELINE_STARTS} starts, {WARMUP + EXECUTIONS:,} executions")
    kernel_dirs = write_kernel_spec(folder)
    bare = [bare_start(kernel_dirs, []) for _ in range(BASELINE_STARTS)]
    imported = [bare_start(kernel_dirs, [IMPORTS]) for _ in range(BASELINE_STARTS)]
    with bare_kernel(kernel_dirs) as (manager, client):
        bare_execute(client, IMPORTS)
        bare_execute(client, WARM_UP)
        pid = kernel_pid(manager)
        idle = rss_mib(pid)
        for _ in range(WARMUP):
            bare_execute(client, "1+1")
        before = rss_mib(pid)
        round_trips = [timed(lambda: bare_execute(client, "1+1")) for _ in range(EXECUTIONS)]
        growth = rss_mib(pid) - before
    return Baseline(bare, imported, round_trips, idle, growth)


# ---- sandboxd ------------------------------------------------------------------------------


@dataclass
class Growth:
    before_mib: float
    after_mib: float

    @property
    def delta_mib(self) -> float:
        return self.after_mib - self.before_mib


@dataclass
class Service:
    pooled_create_ms: list[float]
    cold_create_ms: list[float]
    round_trip_ms: list[float]
    idle_kernel_rss_mib: list[float]
    server_growth: Growth
    kernel_growth: Growth
    driver: str


@contextlib.contextmanager
def sandboxd(folder: Path, pool_size: int) -> Iterator[SandboxdProcess]:
    folder.mkdir(parents=True)
    data_dir = folder / "data"
    server = SandboxdProcess(
        data_dir=data_dir,
        log_path=folder / "sandboxd.log",
        settings={
            "SANDBOXD_POOL_SIZE": str(pool_size),
            "SANDBOXD_DEFAULT_TTL": "600",
        },
    )
    try:
        server.start()
        yield server
    finally:
        server.stop()  # its workdir mounts live in its own mount namespace and vanish with it


def create_to_first_result(server: SandboxdProcess) -> float:
    """Milliseconds for Sandbox.create() + run_code("1+1"); the sandbox is killed afterwards."""
    start = time.perf_counter()
    sandbox = Sandbox.create(url=server.url, token=server.token)
    try:
        expect(sandbox.run_code("1+1").text, "2", "sandbox 1+1")
        return (time.perf_counter() - start) * 1000
    finally:
        sandbox.kill()
        sandbox.close()


def pooled_creates(server: SandboxdProcess) -> list[float]:
    """Each create takes a warm kernel; the pool refills (not timed) before the next one."""
    samples = []
    for _ in range(POOLED_CREATES):
        wait_for_idle_kernels(server, POOL_SIZE)
        samples.append(create_to_first_result(server))
    return samples


def run_code_round_trips(server: SandboxdProcess) -> tuple[list[float], Growth, Growth]:
    """EXECUTIONS timed ``1+1`` cells after WARMUP, with server and kernel RSS around them."""
    with Sandbox.create(url=server.url, token=server.token) as sandbox:
        wait_for_idle_kernels(server, POOL_SIZE + 1)
        server_pid = running_pid(server)
        marker = f"bench-{sandbox.sandbox_id}"
        sandbox.files.write(marker, b"")
        (pid,) = kernel_pids(server_pid, holding=marker)
        context = sandbox.default_context
        for _ in range(WARMUP):
            context.run_code("1+1")
        server_before, kernel_before = rss_mib(server_pid), rss_mib(pid)
        samples = []
        for _ in range(EXECUTIONS):
            start = time.perf_counter()
            execution = context.run_code("1+1")
            samples.append((time.perf_counter() - start) * 1000)
            expect(execution.text, "2", "sandbox 1+1")
        server_growth = Growth(server_before, rss_mib(server_pid))
        kernel_growth = Growth(kernel_before, rss_mib(pid))
    return samples, server_growth, kernel_growth


def measure_service(folder: Path) -> Service:
    step(f"sandboxd with a pool of {POOL_SIZE}: idle kernels, {POOLED_CREATES} pooled creates")
    with sandboxd(folder / "pooled", POOL_SIZE) as server:
        idle_rss = [rss_mib(pid) for pid in wait_for_idle_kernels(server, POOL_SIZE)]
        pooled = pooled_creates(server)
        step(f"{WARMUP + EXECUTIONS:,} run_code executions")
        round_trips, server_growth, kernel_growth = run_code_round_trips(server)
    step(f"sandboxd with no pool: {COLD_CREATES} cold creates")
    with sandboxd(folder / "cold", 0) as server:
        cold = [create_to_first_result(server) for _ in range(COLD_CREATES)]
        driver = isolation_driver(server)
    return Service(pooled, cold, round_trips, idle_rss, server_growth, kernel_growth, driver)


def isolation_driver(server: SandboxdProcess) -> str:
    """The driver sandboxd chose, from its start-up log line."""
    for line in server.read_log().splitlines():
        if line.startswith("isolation driver: "):
            return line.removeprefix("isolation driver: ").strip()
    return "unknown"


# ---- report --------------------------------------------------------------------------------


def ms(samples: list[float], pct: int) -> str:
    return f"{percentile(samples, pct):.1f} ms"


def growth(g: Growth) -> str:
    return f"{g.delta_mib:+.1f} MiB ({g.before_mib:.1f} → {g.after_mib:.1f})"


def row(measure: str, value: str, baseline: str = "", target: str = "", passed: bool | None = None) -> str:
    verdict = "" if passed is None else "pass" if passed else "**FAIL**"
    return f"| {measure} | {value} | {baseline} | {target} | {verdict} |"


def table(service: Service, base: Baseline) -> str:
    create, cold, trips = service.pooled_create_ms, service.cold_create_ms, service.round_trip_ms
    trip_limit = ROUND_TRIP_RATIO * percentile(base.round_trip_ms, 50)
    server, kernel = service.server_growth, service.kernel_growth
    rows = [
        "| Measure | sandboxd | Bare ipykernel (baseline) | Target | Result |",
        "|---|---|---|---|---|",
        row(
            "Create → first `1+1` result, pooled, p50",
            ms(create, 50),
            f"kernel start → `1+1`: {ms(base.start_to_result_ms, 50)}",
            f"≤ {POOLED_CREATE_P50_MS:.0f} ms",
            percentile(create, 50) <= POOLED_CREATE_P50_MS,
        ),
        row("Create → first `1+1` result, pooled, p99", ms(create, 99)),
        row(
            "Create → first `1+1` result, cold (pool 0), p50",
            ms(cold, 50),
            f"kernel start → `{IMPORTS}` → `1+1`: {ms(base.start_imports_to_result_ms, 50)}",
        ),
        row(
            '`run_code("1+1")` round trip, p50',
            ms(trips, 50),
            ms(base.round_trip_ms, 50),
            f"≤ {ROUND_TRIP_RATIO}× baseline ({trip_limit:.1f} ms)",
            percentile(trips, 50) <= trip_limit,
        ),
        row('`run_code("1+1")` round trip, p99', ms(trips, 99), ms(base.round_trip_ms, 99)),
        row(
            "RSS of one idle pooled kernel (startup.py's and warm.py's imports done)",
            f"{statistics.mean(service.idle_kernel_rss_mib):.1f} MiB",
            f"{base.idle_rss_mib:.1f} MiB",
        ),
        row(
            f"sandboxd server RSS growth over {EXECUTIONS:,} executions",
            growth(server),
            "",
            f"≤ {SERVER_GROWTH_MIB:.0f} MiB",
            server.delta_mib <= SERVER_GROWTH_MIB,
        ),
        row(
            f"Kernel RSS growth over {EXECUTIONS:,} executions",
            growth(kernel),
            f"{base.growth_mib:+.1f} MiB",
            f"≤ {KERNEL_GROWTH_MIB:.0f} MiB",
            kernel.delta_mib <= KERNEL_GROWTH_MIB,
        ),
    ]
    return "\n".join(rows)


def header(load_at_start: str) -> str:
    return (
        f"sandboxd benchmark, {time.strftime('%Y-%m-%d %H:%M')}, {platform.machine()},"
        f" {os.cpu_count()} CPUs, load average {load_at_start} at start, {load_average()} at end."
        f" Pool size {POOL_SIZE}; {POOLED_CREATES} pooled and {COLD_CREATES} cold creates;"
        f" {EXECUTIONS:,} `run_code` executions after {WARMUP} warm-up;"
        f" {BASELINE_STARTS} baseline kernel starts of each kind."
    )


def footnote(driver: str) -> str:
    return (
        "Baseline: jupyter_client BlockingKernelClient + ipykernel from the template's virtualenv,"
        f" unsandboxed, tcp, no startup file. sandboxd: the {driver} driver (its default here),"
        " ipc sockets, the template's startup"
        " file (pandas, numpy, matplotlib.pyplot, plotly), timed through the SDK over HTTP. RSS is the"
        " kernel python process only (not bwrap), from /proc/<pid>/status VmRSS; the idle baseline"
        " kernel has imported pandas, numpy and matplotlib and run the template's warm.py."
    )


# ---- main ----------------------------------------------------------------------------------


def report(folder: Path, load_at_start: str) -> str:
    service = measure_service(folder)
    baseline = measure_baseline(folder / "baseline")
    return f"{header(load_at_start)}\n\n{table(service, baseline)}\n\n{footnote(service.driver)}\n"


def main() -> int:
    if not TEMPLATE_PYTHON.exists():
        print(f"the code-interpreter template is not built ({TEMPLATE_PYTHON}); run `make template`")
        return 2
    return harness.run("sandbox", TIME_BUDGET, report)


if __name__ == "__main__":
    sys.exit(main())
