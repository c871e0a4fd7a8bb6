"""sandboxd beside a bare ipykernel, per isolation driver: create, round trip, memory, a CPU hog.

Run from the project root: ``.venv/bin/python benchmarks/sandbox.py`` (``--quick`` for a few
iterations of each). For each driver that works here (bubblewrap, gVisor) the script starts its
own sandboxd processes (a warm pool of POOL_SIZE, then a pool of 0 for cold creates) in a
temporary data folder, and a bare jupyter_client + ipykernel from the code-interpreter
template's virtualenv (unsandboxed, tcp, no startup file) as the baseline. It also times a
sandbox's ``1+1`` while a neighbouring sandbox runs HOG_PROCESSES spinning processes, beside the
same without them. It prints a Markdown table with a column per driver, baselines and targets,
and writes it to benchmarks/results/sandbox.md. Every process it starts is stopped on exit, on
error and on Ctrl-C.
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
from sandboxes.drivers import choose_driver  # noqa: E402
from sandboxes.drivers.base import SANDBOX_RUNTIME, SANDBOX_UID, DriverUnavailable  # noqa: E402
from sandboxes.drivers.limits import CGROUP_ROOT  # noqa: E402
from sandboxes.kernels.kernel import LAUNCHER, in_own_namespace  # noqa: E402
from tests.sandboxd_process import SandboxdProcess  # noqa: E402

TEMPLATE_PYTHON = ROOT / "var" / "templates" / "code-interpreter" / "venv" / "bin" / "python"

QUICK = "--quick" in sys.argv[1:]
DRIVERS = ("bwrap", "gvisor")
POOL_SIZE = 2
POOLED_CREATES = 5 if QUICK else 20
COLD_CREATES = 2 if QUICK else 5
BASELINE_STARTS = 2 if QUICK else 3
EXECUTIONS = 100 if QUICK else 1_000
WARMUP = 20 if QUICK else 100
NEIGHBOUR_EXECUTIONS = 30 if QUICK else 200
HOG_PROCESSES = 8
HOG = (
    "import subprocess, sys\n"
    f"hogs = [subprocess.Popen([sys.executable, '-c', 'while True: pass']) for _ in range({HOG_PROCESSES})]"
)
IMPORTS = "import pandas, numpy, matplotlib"
# What pooled kernels import while they wait (the template's warm.py): the idle baseline runs it too.
WARM_UP = in_own_namespace(templates.get("code-interpreter", Path()).warm_up_code, "__sandbox_warm_up__")

# Targets.
POOLED_CREATE_P50_MS = 150.0
ROUND_TRIP_RATIO = 1.5
SERVER_GROWTH_MIB = 10.0
KERNEL_GROWTH_MIB = 5.0
NEIGHBOUR_RATIO = 1.5  # a neighbour's round trip under the hog, against the same without it

SETTLE_WINDOW = 0.3  # seconds with (almost) no CPU use that count as "the pool is refilled"
IDLE_TICKS = 1  # clock ticks a settled sandbox may use in that window (gVisor's Sentry keeps time)
SETTLE_TIMEOUT = 60.0
TIME_BUDGET = 900  # hard stop (seconds) so a hung kernel cannot hold the machine


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
    return cmdline(pid)[1:2] == [f"{SANDBOX_RUNTIME}/{LAUNCHER.name}"]


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


def sandbox_groups(server_pid: int) -> list[Path]:
    """The memory cgroups of the server's sandboxes (one per sandbox, whatever the driver made).

    Other sandboxd processes on the machine have groups of the same names: only those holding a
    descendant of ``server_pid`` count.
    """
    root = CGROUP_ROOT / "memory" if (CGROUP_ROOT / "memory").is_dir() else CGROUP_ROOT
    table = parents()
    groups = []
    for group in [*subgroups(root), *(child for parent in subgroups(root) for child in subgroups(parent))]:
        procs = group_pids(group)
        if procs and any(ancestry(pid, table, server_pid) for pid in procs):
            groups.append(group)
    return sorted(groups)


def subgroups(parent: Path) -> list[Path]:
    """sandboxd's cgroups directly under ``parent`` (they come and go as we look)."""
    try:
        return [parent / entry.name for entry in os.scandir(parent) if entry.name.startswith("sandboxd")]
    except OSError:
        return []


def group_pids(group: Path) -> list[int]:
    try:
        return [int(pid) for pid in (group / "cgroup.procs").read_text().split()]
    except OSError:
        return []


def group_ticks(group: Path) -> int:
    return sum(cpu_ticks(pid) for pid in group_pids(group))


def group_memory_mib(group: Path) -> float:
    """What the sandbox holds in memory: anonymous memory plus shmem (gVisor keeps its guest's
    memory in a memfd), from the cgroup's memory.stat; page cache is left out."""
    try:
        stat = dict(line.split() for line in (group / "memory.stat").read_text().splitlines())
    except OSError:
        return float("nan")
    anon = int(stat.get("rss", stat.get("anon", 0)))
    return (anon + int(stat.get("shmem", 0))) / (1 << 20)


def running_pid(server: SandboxdProcess) -> int:
    """The sandboxd process id; raises if it has exited."""
    if server.process is None or server.process.poll() is not None:
        raise RuntimeError(f"sandboxd is not running:\n{server.read_log()[-2000:]}")
    return server.process.pid


def wait_for_idle_sandboxes(server: SandboxdProcess, count: int) -> list[Path]:
    """Block until exactly ``count`` sandboxes run under the server and none used more than
    IDLE_TICKS of CPU in SETTLE_WINDOW seconds (a starting kernel is busy importing); return
    their cgroups."""
    deadline = time.monotonic() + SETTLE_TIMEOUT
    while time.monotonic() < deadline:
        groups = sandbox_groups(running_pid(server))
        before = [group_ticks(g) for g in groups]
        time.sleep(SETTLE_WINDOW)
        used = [group_ticks(g) - ticks for g, ticks in zip(groups, before, strict=True)]
        if len(groups) == count and all(0 <= ticks <= IDLE_TICKS for ticks in used):
            return groups
    raise TimeoutError(f"the pool did not settle at {count} idle sandboxes within {SETTLE_TIMEOUT:.0f}s")


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
    driver: str
    pooled_create_ms: list[float]
    cold_create_ms: list[float]
    round_trip_ms: list[float]
    idle_sandbox_mib: list[float]
    idle_kernel_rss_mib: list[float]  # empty where the kernel is no host process (gVisor)
    server_growth: Growth
    kernel_growth: Growth | None
    neighbour_quiet_ms: list[float]
    neighbour_hog_ms: list[float]


def sandboxd(folder: Path, pool_size: int, driver: str) -> contextlib.AbstractContextManager[SandboxdProcess]:
    settings = {
        "SANDBOXD_POOL_SIZE": str(pool_size),
        "SANDBOXD_POOL_MAX": str(pool_size),  # a fixed pool: benchmarks/pool.py measures growth
        "SANDBOXD_DEFAULT_TTL": "600",
        "SANDBOXD_DRIVER": driver,
    }
    return harness.sandboxd(folder, settings)


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
        wait_for_idle_sandboxes(server, POOL_SIZE)
        samples.append(create_to_first_result(server))
    return samples


def round_trips(sandbox: Sandbox, count: int) -> list[float]:
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        execution = sandbox.default_context.run_code("1+1")
        samples.append((time.perf_counter() - start) * 1000)
        expect(execution.text, "2", "sandbox 1+1")
    return samples


def run_code_round_trips(server: SandboxdProcess) -> tuple[list[float], Growth, Growth | None]:
    """EXECUTIONS timed ``1+1`` cells after WARMUP, with server and kernel RSS around them (the
    kernel's only where it is a host process: not under gVisor)."""
    with Sandbox.create(url=server.url, token=server.token) as sandbox:
        wait_for_idle_sandboxes(server, POOL_SIZE + 1)
        server_pid = running_pid(server)
        marker = f"bench-{sandbox.sandbox_id}"
        sandbox.files.write(marker, b"")
        pids = kernel_pids(server_pid, holding=marker)
        round_trips(sandbox, WARMUP)
        server_before = rss_mib(server_pid)
        kernel_before = rss_mib(pids[0]) if pids else 0.0
        samples = round_trips(sandbox, EXECUTIONS)
        server_growth = Growth(server_before, rss_mib(server_pid))
        kernel_growth = Growth(kernel_before, rss_mib(pids[0])) if pids else None
    return samples, server_growth, kernel_growth


def neighbour_round_trips(server: SandboxdProcess) -> tuple[list[float], list[float]]:
    """A sandbox's ``1+1`` round trips, then the same while another sandbox runs HOG."""
    with (
        Sandbox.create(url=server.url, token=server.token) as neighbour,
        Sandbox.create(url=server.url, token=server.token) as hog,
    ):
        round_trips(neighbour, WARMUP)
        quiet = round_trips(neighbour, NEIGHBOUR_EXECUTIONS)
        hog.run_code(HOG)
        time.sleep(1)
        spinning = hog.run_code("sum(p.poll() is None for p in hogs)").text
        expect(spinning, str(HOG_PROCESSES), "spinners running beside the neighbour")
        busy = round_trips(neighbour, NEIGHBOUR_EXECUTIONS)
    # Killed on leaving the block, the hog's spinners with it.
    return quiet, busy


def measure_service(folder: Path, driver: str) -> Service:
    step(f"{driver}: sandboxd with a pool of {POOL_SIZE}: idle sandboxes, {POOLED_CREATES} pooled creates")
    with sandboxd(folder / "pooled", POOL_SIZE, driver) as server:
        expect(isolation_driver(server), driver, "sandboxd's driver")
        idle_groups = wait_for_idle_sandboxes(server, POOL_SIZE)
        idle_memory = [group_memory_mib(group) for group in idle_groups]
        idle_rss = [rss_mib(pid) for pid in kernel_pids(running_pid(server))]
        pooled = pooled_creates(server)
        step(f"{driver}: {WARMUP + EXECUTIONS:,} run_code executions")
        trips, server_growth, kernel_growth = run_code_round_trips(server)
        step(
            f"{driver}: {NEIGHBOUR_EXECUTIONS} neighbour round trips, alone and with {HOG_PROCESSES} spinners"
        )
        quiet, busy = neighbour_round_trips(server)
    step(f"{driver}: sandboxd with no pool: {COLD_CREATES} cold creates")
    with sandboxd(folder / "cold", 0, driver) as server:
        cold = [create_to_first_result(server) for _ in range(COLD_CREATES)]
    return Service(
        driver, pooled, cold, trips, idle_memory, idle_rss, server_growth, kernel_growth, quiet, busy
    )


def isolation_driver(server: SandboxdProcess) -> str:
    """The driver sandboxd chose, from its start-up log line."""
    for line in server.read_log().splitlines():
        if line.startswith("isolation driver: "):
            return line.removeprefix("isolation driver: ").strip()
    return "unknown"


def usable(driver: str) -> bool:
    """Whether ``driver`` runs here (gVisor needs root and a current runsc)."""
    try:
        choose_driver(driver, (SANDBOX_UID, SANDBOX_UID) if os.geteuid() == 0 else None)
    except DriverUnavailable as exc:
        step(f"{driver}: not measured: {exc}")
        return False
    return True


# ---- report --------------------------------------------------------------------------------


def ms(samples: list[float], pct: int) -> str:
    return f"{percentile(samples, pct):.1f} ms"


def growth(g: Growth) -> str:
    return f"{g.delta_mib:+.1f} MiB ({g.before_mib:.1f} → {g.after_mib:.1f})"


def verdict(passed: bool) -> str:
    return " (pass)" if passed else " (**FAIL**)"


def table(services: list[Service], base: Baseline) -> str:
    """One column per driver; each figure says whether it meets its target."""
    trip_limit = ROUND_TRIP_RATIO * percentile(base.round_trip_ms, 50)

    def cells(figure: Callable[[Service], str]) -> str:
        return " | ".join(figure(service) for service in services)

    def pooled(s: Service) -> str:
        p50 = percentile(s.pooled_create_ms, 50)
        return f"{p50:.1f} ms" + verdict(p50 <= POOLED_CREATE_P50_MS)

    def trip(s: Service) -> str:
        p50 = percentile(s.round_trip_ms, 50)
        return f"{p50:.1f} ms" + verdict(p50 <= trip_limit)

    def neighbour(s: Service) -> str:
        quiet, busy = percentile(s.neighbour_quiet_ms, 50), percentile(s.neighbour_hog_ms, 50)
        return f"{quiet:.1f} → {busy:.1f} ms, {busy / quiet:.1f}×" + verdict(busy / quiet <= NEIGHBOUR_RATIO)

    def server_growth(s: Service) -> str:
        return growth(s.server_growth) + verdict(s.server_growth.delta_mib <= SERVER_GROWTH_MIB)

    def kernel_growth(s: Service) -> str:
        if s.kernel_growth is None:
            return "n/a (inside the Sentry)"
        return growth(s.kernel_growth) + verdict(s.kernel_growth.delta_mib <= KERNEL_GROWTH_MIB)

    def kernel_rss(s: Service) -> str:
        return f"{statistics.mean(s.idle_kernel_rss_mib):.1f} MiB" if s.idle_kernel_rss_mib else "n/a"

    columns = " | ".join(f"sandboxd, {s.driver}" for s in services)
    rows = [
        f"| Measure | {columns} | Bare ipykernel (baseline) | Target |",
        f"|---|{'---|' * len(services)}---|---|",
        f"| Create → first `1+1` result, pooled, p50 | {cells(pooled)}"
        f" | kernel start → `1+1`: {ms(base.start_to_result_ms, 50)} | ≤ {POOLED_CREATE_P50_MS:.0f} ms |",
        f"| Create → first `1+1` result, pooled, p99 | {cells(lambda s: ms(s.pooled_create_ms, 99))} | | |",
        f"| Create → first `1+1` result, cold (pool 0), p50 | {cells(lambda s: ms(s.cold_create_ms, 50))}"
        f" | kernel start → `{IMPORTS}` → `1+1`: {ms(base.start_imports_to_result_ms, 50)} | |",
        f'| `run_code("1+1")` round trip, p50 | {cells(trip)} | {ms(base.round_trip_ms, 50)}'
        f" | ≤ {ROUND_TRIP_RATIO}× baseline ({trip_limit:.1f} ms) |",
        f'| `run_code("1+1")` round trip, p99 | {cells(lambda s: ms(s.round_trip_ms, 99))}'
        f" | {ms(base.round_trip_ms, 99)} | |",
        f"| A neighbour's `1+1` p50, alone → while another sandbox runs {HOG_PROCESSES} spinners"
        f" | {cells(neighbour)} | | ≤ {NEIGHBOUR_RATIO}× |",
        f"| Memory of one idle pooled sandbox (its cgroup: anonymous + shmem)"
        f" | {cells(lambda s: f'{statistics.mean(s.idle_sandbox_mib):.1f} MiB')} | | |",
        f"| RSS of one idle pooled kernel python (startup.py's and warm.py's imports done)"
        f" | {cells(kernel_rss)} | {base.idle_rss_mib:.1f} MiB | |",
        f"| sandboxd server RSS growth over {EXECUTIONS:,} executions | {cells(server_growth)}"
        f" | | ≤ {SERVER_GROWTH_MIB:.0f} MiB |",
        f"| Kernel RSS growth over {EXECUTIONS:,} executions | {cells(kernel_growth)}"
        f" | {base.growth_mib:+.1f} MiB | ≤ {KERNEL_GROWTH_MIB:.0f} MiB |",
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


def footnote() -> str:
    return (
        "Baseline: jupyter_client BlockingKernelClient + ipykernel from the template's virtualenv,"
        " unsandboxed, tcp, no startup file. sandboxd: each driver chosen explicitly"
        " (SANDBOXD_DRIVER), ipc sockets, the template's startup"
        " file (pandas, numpy, matplotlib.pyplot, plotly), timed through the SDK over HTTP. RSS is the"
        " kernel python process only (not bwrap), from /proc/<pid>/status VmRSS; under gVisor the"
        " kernel is no host process, so only its sandbox's cgroup is measured. The idle baseline"
        " kernel has imported pandas, numpy and matplotlib and run the template's warm.py."
        f" The spinners are {HOG_PROCESSES} `while True: pass` processes started by a cell."
    )


# ---- main ----------------------------------------------------------------------------------


def report(folder: Path, load_at_start: str) -> str:
    services = [measure_service(folder / driver, driver) for driver in DRIVERS if usable(driver)]
    baseline = measure_baseline(folder / "baseline")
    return f"{header(load_at_start)}\n\n{table(services, baseline)}\n\n{footnote()}\n"


def main() -> int:
    if not TEMPLATE_PYTHON.exists():
        print(f"the code-interpreter template is not built ({TEMPLATE_PYTHON}); run `make template`")
        return 2
    return harness.run("sandbox", TIME_BUDGET, report)


if __name__ == "__main__":
    sys.exit(main())
