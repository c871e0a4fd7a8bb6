"""The gVisor driver, chosen explicitly: the SDK contract and the essential walls hold under runsc."""

import contextlib
import socket
from pathlib import Path

import pytest
from django.conf import settings

from sandboxes import Sandbox
from tests.conftest import TEST_SETTINGS
from tests.sandboxd_process import ROOT, own_sandboxd_process
from tests.sandboxes.gvisor_service import needs_runsc

pytestmark = needs_runsc


@pytest.fixture(scope="module")
def gvisor_sandboxd():
    settings = {**TEST_SETTINGS, "SANDBOXD_DRIVER": "gvisor", "SANDBOXD_POOL_SIZE": "0"}
    with own_sandboxd_process(settings, prefix="sandboxd-gvisor-test-", start_timeout=120) as process:
        yield process


@pytest.fixture
def gvisor_sandbox(gvisor_sandboxd):
    sandbox = Sandbox.create(url=gvisor_sandboxd.url, token=gvisor_sandboxd.token)
    yield sandbox
    sandbox.kill()
    sandbox.close()


def test_the_service_runs_on_gvisor(gvisor_sandboxd):
    assert "isolation driver: gvisor" in gvisor_sandboxd.read_log()


def descendants(pid: int) -> set[int]:
    parents = {}
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError, ValueError):
            stat = (entry / "stat").read_text()
            parents[int(entry.name)] = int(stat[stat.rindex(")") + 2 :].split()[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def test_the_sentry_runs_on_the_systrap_platform(gvisor_sandboxd, gvisor_sandbox):
    """systrap is the default (SANDBOXD_GVISOR_PLATFORM): kvm hangs here, ptrace is slow."""
    assert gvisor_sandbox.run_code("1 + 1").text == "2"
    sentries = []
    for pid in descendants(gvisor_sandboxd.process.pid):
        with contextlib.suppress(OSError):
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
            if argv[0] == "runsc-sandbox":
                sentries.append(argv)
    assert sentries, "no gVisor Sentry (runsc-sandbox) runs under sandboxd"
    assert all("--platform=systrap" in argv for argv in sentries), sentries


def test_the_whole_sandbox_has_a_cpu_quota_and_an_equal_weight(gvisor_sandboxd, gvisor_sandbox):
    """The Sentry (and everything the guest runs, spinners a cell leaves included) sits in a cpu
    cgroup holding SANDBOXD_CPU_LIMIT cores with the default weight, as a bubblewrap kernel does."""
    spin = "import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', 'while True: pass'])"
    assert gvisor_sandbox.run_code(spin).error is None
    sentry = next(
        pid
        for pid in descendants(gvisor_sandboxd.process.pid)
        if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"runsc-sandbox")
    )
    lines = dict(line.split(":", 2)[1:] for line in Path(f"/proc/{sentry}/cgroup").read_text().splitlines())
    cores = float(TEST_SETTINGS.get("SANDBOXD_CPU_LIMIT", settings.SANDBOXD_CPU_LIMIT))
    if "cpu" in lines or "cpu,cpuacct" in lines:  # cgroup v1
        group = Path("/sys/fs/cgroup/cpu") / lines.get("cpu", lines.get("cpu,cpuacct", "")).lstrip("/")
        quota, period = (int((group / f"cpu.cfs_{k}_us").read_text()) for k in ("quota", "period"))
        assert (quota / period, int((group / "cpu.shares").read_text())) == (cores, 1024)
    else:
        group = Path("/sys/fs/cgroup") / lines[""].lstrip("/")
        quota, period = (group / "cpu.max").read_text().split()
        assert (int(quota) / int(period), int((group / "cpu.weight").read_text())) == (cores, 100)


def test_state_tables_charts_and_errors(gvisor_sandbox):
    gvisor_sandbox.files.write("data/sales.csv", "region,amount\nnorth,10\nsouth,32\n")
    gvisor_sandbox.run_code("df = pd.read_csv('data/sales.csv')")
    assert gvisor_sandbox.run_code("int(df.amount.sum())").text == "42"
    assert "<table" in gvisor_sandbox.run_code("df").html
    assert gvisor_sandbox.run_code("plt.plot([1, 2]); plt.show()").png
    assert gvisor_sandbox.run_code("1 / 0").error.name == "ZeroDivisionError"


def test_inside_runs_unprivileged_on_gvisors_kernel(gvisor_sandbox):
    source = ROOT / "config" / "settings.py"
    assert source.exists()
    observed = gvisor_sandbox.run_code(
        f"import os\n(os.getuid(), os.path.exists({str(source)!r}), open('/proc/version').read())"
    ).text
    uid, sees_project_source, kernel = eval(observed)
    assert uid in range(settings.SANDBOXD_UID_BASE, settings.SANDBOXD_UID_BASE + settings.SANDBOXD_UID_COUNT)
    assert not sees_project_source
    assert kernel != Path("/proc/version").read_text(), "the cell ran on the host's kernel"


def test_no_network(gvisor_sandbox):
    """Redis answers on the host's loopback but not on the sandbox's, and the sandbox's own tables
    show no interface but its loopback and no route out (read, never tried past loopback)."""
    with socket.create_connection(("127.0.0.1", 6379), timeout=2):
        pass
    code = (
        "import os, socket\n"
        "def reach(address):\n"
        "    try:\n"
        "        socket.create_connection(address, timeout=2).close()\n"
        "        return 'connected'\n"
        "    except OSError as exc:\n"
        "        return type(exc).__name__\n"
        "def table(path, skip):\n"
        "    if not os.path.exists(path):\n"
        "        return []\n"
        "    return [line.split() for line in open(path).readlines()[skip:]]\n"
        "(reach(('127.0.0.1', 6379)), [row[0].rstrip(':') for row in table('/proc/net/dev', 2)],"
        " table('/proc/net/route', 1))"
    )
    redis, interfaces, routes = eval(gvisor_sandbox.run_code(code).text)
    assert redis != "connected"
    assert interfaces == ["lo"]
    assert routes == []


def test_memory_limit_kills_and_the_context_recovers(gvisor_sandbox):
    execution = gvisor_sandbox.run_code("blocks = []\nwhile True: blocks.append(bytearray(64 << 20))")
    assert execution.error is not None
    assert execution.error.name in ("KernelDied", "MemoryError"), execution.error
    assert gvisor_sandbox.run_code("2 + 2").text == "4"


def test_timeout_interrupts(gvisor_sandbox):
    gvisor_sandbox.run_code("kept = 1")
    execution = gvisor_sandbox.run_code("while True: pass", timeout=2)
    assert execution.error.name == "TimeoutError"
    assert gvisor_sandbox.run_code("kept").text == "1"


def test_a_snapshot_restores_on_gvisor(gvisor_sandboxd, gvisor_sandbox):
    """The namespace reaches the restored kernel through a host named pipe (--host-fifo=open)."""
    gvisor_sandbox.files.write("data/kept.txt", "kept")
    gvisor_sandbox.run_code("import numpy as np\nx = 41\nvalues = np.arange(300_000)")
    snapshot = gvisor_sandbox.snapshot()
    restored = Sandbox.restore(snapshot.snapshot_id, url=gvisor_sandboxd.url, token=gvisor_sandboxd.token)
    try:
        assert restored.run_code("x + 1, int(values.sum())").text == "(42, 44999850000)"
        assert restored.files.read("data/kept.txt") == "kept"
    finally:
        restored.kill()
        restored.close()
        Sandbox.delete_snapshot(snapshot.snapshot_id, url=gvisor_sandboxd.url, token=gvisor_sandboxd.token)
