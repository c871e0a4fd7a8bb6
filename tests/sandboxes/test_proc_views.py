"""What /proc and /sys tell a kernel under bubblewrap: no host path in its mount table, its own
memory and CPUs, and nothing that names the host.

mountinfo names each mount's source folder as a path inside its filesystem: a bind mount of the
template under the checkout showed that path, the interpreter under /root, the runtime folder
under /tmp, and a tmpfs mounted with uid= the host uid. /proc/meminfo showed the host's memory,
which libraries size themselves from.

bubblewrap's own tmpfs mounts (/, /dev, /tmp, and the files it places, such as /etc/passwd)
carried the host uid it runs as (the kernel prints a tmpfs's owner in the host's terms, and
bubblewrap mounts them unprivileged); they are folders of a tmpfs sandboxd mounts now
(sandboxes/drivers/scaffold.py), and no line of the table names that uid.

The host's kernel command line, build, boot id, disks, load and CPU count showed through
the rest of /proc (sandboxes/drivers/procfiles.py places the sandbox's own); each is read here on
the host too, so that a host value that shows through fails the test. Forked kernels
(sandboxes/forkserver) place the same files: both sandboxds are asked.
"""

from __future__ import annotations

import math
import os
import re
import socket
from pathlib import Path

import pytest
from django.conf import settings

from tests.sandboxes.bwrap_service import CPU_LIMIT, needs_root
from tests.sandboxes.test_escape import MEMORY_LIMIT, PROJECT_ROOT, host_pids_in, pid_namespace_of, probe

pytestmark = [pytest.mark.escape, needs_root]

READ_VIEWS = """
views = {}
for name in ('/proc/self/mountinfo', '/proc/mounts', '/proc/self/mounts', '/proc/meminfo'):
    with open(name) as f:
        views[name] = f.read()
observed = views
"""


def host_uid(sandbox) -> int:
    [uid] = {
        int(line.split()[1])
        for pid in host_pids_in(pid_namespace_of(sandbox))
        for line in Path(f"/proc/{pid}/status").read_text().splitlines()
        if line.startswith("Uid:")
    }
    return uid


def test_the_mount_table_names_no_host_path(bwrap_sandboxd, make_bwrap_sandbox):
    sandbox = make_bwrap_sandbox()
    views = probe(sandbox, READ_VIEWS)
    uid = host_uid(sandbox)
    host_paths = [str(PROJECT_ROOT), "/root", str(bwrap_sandboxd.data_dir), "/tmp/", "/work"]
    for name in ("/proc/self/mountinfo", "/proc/mounts", "/proc/self/mounts"):
        table = views[name]
        assert "/opt/template" in table and "/home/user" in table  # the table is really there
        for path in host_paths:
            assert path not in table, f"{path} shows in {name}:\n{table}"
        assert not re.search(rf"\b{uid}\b", table), f"the host uid {uid} shows in {name}:\n{table}"

    # The interpreter, seen at /opt/python, is the template's own, its libpython included (a
    # shared build's RUNPATH names the host path; the system's libpython would be taken instead).
    interpreter = probe(
        sandbox,
        "import platform, sys\n"
        "libs = {line.split()[-1] for line in open('/proc/self/maps') if 'libpython' in line}\n"
        "observed = [sys.base_prefix, sys.executable, platform.python_version(), sorted(libs)]",
    )
    config = (Path(settings.SANDBOXD_TEMPLATES_DIR) / "code-interpreter" / "venv" / "pyvenv.cfg").read_text()
    [version] = [line.split("=")[1].strip() for line in config.splitlines() if line.startswith("version")]
    assert interpreter[:3] == ["/opt/python", "/opt/template/venv/bin/python", version], interpreter
    assert all(lib.startswith("/opt/python/") for lib in interpreter[3]), interpreter


def test_meminfo_is_the_sandboxs_memory_not_the_hosts(make_bwrap_sandbox):
    views = probe(make_bwrap_sandbox(), READ_VIEWS)
    figures = {
        name: int(value.split()[0]) * 1024
        for name, value in (line.split(":", 1) for line in views["/proc/meminfo"].splitlines())
        if value.strip().endswith("kB")
    }
    host_total = int(Path("/proc/meminfo").read_text().split()[1]) * 1024
    assert host_total > MEMORY_LIMIT  # else the test proves nothing
    assert figures["MemTotal"] == MEMORY_LIMIT
    assert 0 < figures["MemAvailable"] <= MEMORY_LIMIT
    assert 0 < figures["MemFree"] <= MEMORY_LIMIT
    assert figures["SwapTotal"] == 0


def test_terminals_are_the_sandboxs_own_and_bounded(make_bwrap_sandbox):
    """IPython's `!cmd` runs in a pseudo-terminal: the sandbox has a devpts instance of its own
    (none of the host's terminals in it), which holds at most 64."""
    observed = probe(
        make_bwrap_sandbox(),
        """
        import errno, os
        before = sorted(os.listdir('/dev/pts'))
        opened = []
        try:
            for _ in range(100):
                opened.append(os.openpty())
        except OSError as exc:
            failure = errno.errorcode[exc.errno]
        listed = len(os.listdir('/dev/pts'))
        for pair in opened:
            os.close(pair[0])
            os.close(pair[1])
        observed = {'before': before, 'opened': len(opened), 'failure': failure, 'listed': listed}
        """,
    )
    assert observed == {"before": ["ptmx"], "opened": 64, "failure": "ENOSPC", "listed": 65}, observed


HOST_FILES = (
    "/proc/cmdline",
    "/proc/version",
    "/proc/sys/kernel/random/boot_id",
    "/proc/loadavg",
    "/proc/uptime",
    "/proc/stat",
    "/proc/cpuinfo",
    "/proc/partitions",
    "/proc/diskstats",
    "/proc/swaps",
    "/proc/interrupts",
    "/proc/softirqs",
    "/proc/zoneinfo",
    "/sys/devices/system/cpu/online",
)
READ_HOST_FILES = f"""
import os, socket
def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as exc:
        return type(exc).__name__
observed = {{path: read(path) for path in {HOST_FILES!r}}}
observed['hostname'] = socket.gethostname()
observed['cpu_count'] = os.cpu_count()
observed['present'] = [path for path in ('/sys', '/sys/block', '/sys/class/dmi', '/sys/firmware')
                       if os.path.exists(path)]
"""
# What numpy, pandas and scikit-learn make of the CPUs they are shown: they must still work.
LIBRARIES_AT_WORK = """
import warnings
warnings.simplefilter('error')
import joblib, numpy, pandas
from sklearn.cluster import KMeans
from sklearn.ensemble import RandomForestClassifier
points = numpy.random.default_rng(0).random((200, 2))
labels = KMeans(2, n_init=1, random_state=0).fit_predict(points)
forest = RandomForestClassifier(n_estimators=8, n_jobs=-1, random_state=0).fit(points, labels)
observed = {
    'joblib': joblib.cpu_count(),
    'score': float(forest.score(points, labels)),
    'mean': float(pandas.DataFrame(points).describe().loc['mean'].mean()),
}
"""


def host_files() -> dict[str, str]:
    return {path: Path(path).read_text() for path in HOST_FILES if os.path.exists(path)}


# Where each table names its devices: the column of the name, and the header lines above the rows.
DEVICE_COLUMNS = {"/proc/partitions": (3, 2), "/proc/diskstats": (2, 0), "/proc/swaps": (0, 1)}


def device_names(path: str, table: str) -> set[str]:
    """The block devices (or swap files) a /proc table names."""
    column, header = DEVICE_COLUMNS[path]
    return {line.split()[column] for line in table.splitlines()[header:] if line.strip()}


@pytest.fixture(params=["bwrap", "forked"])
def own_view(request) -> tuple[dict, float]:
    """What a kernel reads, under bubblewrap and forked, with the CPU limit it runs under."""
    if request.param == "bwrap":
        make, cpu_limit = request.getfixturevalue("make_bwrap_sandbox"), CPU_LIMIT
    else:
        make, cpu_limit = request.getfixturevalue("make_sandbox"), settings.SANDBOXD_CPU_LIMIT
    sandbox = make()
    observed = probe(sandbox, READ_HOST_FILES)
    assert isinstance(observed, dict)
    return observed, cpu_limit


def test_no_host_identifier_shows_through(own_view):
    inside, _ = own_view
    host = host_files()
    for path in ("/proc/cmdline", "/proc/version", "/proc/sys/kernel/random/boot_id"):
        assert inside[path] != host[path], f"the host's {path} shows: {inside[path]!r}"
    assert host["/proc/cmdline"].strip() not in inside["/proc/cmdline"]
    assert host["/proc/version"].split("#")[0] not in inside["/proc/version"], inside["/proc/version"]
    assert re.fullmatch(r"[0-9a-f-]{36}\n", inside["/proc/sys/kernel/random/boot_id"])
    assert inside["hostname"] == "sandbox" != socket.gethostname()
    assert inside["present"] == ["/sys"], "the host's devices, firmware or DMI tables show"
    for path in DEVICE_COLUMNS:
        assert device_names(path, inside[path]) == set(), f"devices show in {path}: {inside[path]!r}"
    for path in ("/proc/partitions", "/proc/diskstats"):
        assert device_names(path, host[path]), f"the host has no devices in {path}: that proves nothing"
    for path in ("/proc/interrupts", "/proc/softirqs", "/proc/zoneinfo"):
        assert host[path] and inside[path] == "", f"the host's {path} shows"


def test_the_load_is_the_sandboxs_and_the_boot_time_the_hosts(own_view):
    """The boot time is the host's on purpose: /proc/<pid>/stat counts every process's start from
    it (test_warm_pool.py dates a kernel so, as psutil does)."""
    inside, _ = own_view
    host = host_files()
    assert inside["/proc/loadavg"].split()[:3] == ["0.00", "0.00", "0.00"]
    host_tasks, tasks = (
        int(view.split()[3].split("/")[1]) for view in (host["/proc/loadavg"], inside["/proc/loadavg"])
    )
    assert tasks < host_tasks, "the host's task count shows in /proc/loadavg"

    def boot_time(stat: str) -> int:
        return int(re.search(r"^btime (\d+)$", stat, re.M).group(1))

    assert boot_time(inside["/proc/stat"]) == boot_time(host["/proc/stat"])
    assert inside["/proc/uptime"].split()[0] != "0.00"


def test_the_cpus_are_the_sandboxs_quota(own_view):
    inside, cpu_limit = own_view
    host_cpus = os.cpu_count() or 1
    shown = max(1, min(host_cpus, math.ceil(cpu_limit)))  # its quota, rounded up
    assert shown < host_cpus, f"a limit of {cpu_limit} cores on {host_cpus} CPUs proves nothing"
    assert inside["cpu_count"] == shown
    assert len(re.findall(r"^processor\s*:", inside["/proc/cpuinfo"], re.M)) == shown
    assert len(re.findall(r"^cpu\d+ ", inside["/proc/stat"], re.M)) == shown
    assert inside["/sys/devices/system/cpu/online"] == ("0\n" if shown == 1 else f"0-{shown - 1}\n")
    assert re.search(r"^model name", inside["/proc/cpuinfo"], re.M), "code picks instructions by the model"


def test_numpy_pandas_and_scikit_learn_work_on_the_cpus_they_are_shown(make_bwrap_sandbox):
    observed = probe(make_bwrap_sandbox(), LIBRARIES_AT_WORK)
    assert observed["score"] > 0.9 and 0 < observed["mean"] < 1, observed
    assert observed["joblib"] >= 1
