"""Kernels forked from a zygote per template (sandboxes/forkserver): forked, sharing its pages, and
confined exactly as bubblewrap confines a kernel it starts itself.

The default sandboxd of the tests forks (sandboxd is root here); ``bwrap_sandboxd`` does not
(SANDBOXD_FORK_SERVER=false), which gives the same probe run under bubblewrap for comparison.
"""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

from sandboxes import Sandbox
from tests.sandboxd_process import SandboxdProcess
from tests.sandboxes.bwrap_service import host_uid_of, needs_root
from tests.sandboxes.test_escape import host_pids_in, probe

pytestmark = needs_root

# What a kernel can see of its confinement: every line must be the same under both.
CONFINEMENT = """
import ctypes, os, socket, subprocess
libc = ctypes.CDLL(None, use_errno=True)
refused = {}
for name, flags in (('user', 0x10000000), ('mount', 0x00020000), ('net', 0x40000000)):
    refused[name] = libc.unshare(flags) != 0
child = libc.syscall(56, 0x10000000 | 17, 0, 0, 0, 0)  # clone(CLONE_NEWUSER | SIGCHLD)
if child == 0:
    os._exit(0)
refused['clone_user'] = child < 0
status = {line.split(':')[0]: line.split()[1] for line in open('/proc/self/status')
          if line.startswith(('CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb', 'NoNewPrivs', 'Seccomp:'))}
mounts = sorted({(line.split()[4], line.split()[5]) for line in open('/proc/self/mountinfo')})
placed = ('/etc/passwd', '/etc/group', '/etc/hosts')  # bind-mounted by bubblewrap, written here
paths = ('/', '/usr', '/etc', '/opt/template', '/tmp', '/home/user', '/dev/shm')
devices = ['sh', '-c', 'echo x > /dev/null && head -c1 /dev/urandom | wc -c']
observed = {
    'root': sorted(os.listdir('/')),
    'dev': sorted(os.listdir('/dev')),
    'mounts': [point + ' ' + options for point, options in mounts if point not in placed],
    'status': status,
    'refused': refused,
    'cgroup': [line.strip().split(':', 2)[2] for line in open('/proc/self/cgroup')],
    'processes': len([entry for entry in os.listdir('/proc') if entry.isdigit()]),
    'hostname': socket.gethostname(),
    'interfaces': sorted(os.listdir('/sys/class/net')) if os.path.isdir('/sys/class/net') else None,
    'environment': sorted(os.environ),
    'writable': [path for path in paths if os.access(path, os.W_OK)],
    'devices': subprocess.run(devices, capture_output=True, text=True).stdout.split(),
}
"""


def kernel_pids(sandbox: Sandbox) -> list[int]:
    """Host pids of the processes in the sandbox's pid namespace."""
    namespace = probe(sandbox, "import os\nobserved = os.readlink('/proc/self/ns/pid')")
    assert isinstance(namespace, str)
    return host_pids_in(namespace)


def parent_of(pid: int) -> int:
    return int(re.search(r"^PPid:\s+(\d+)", Path(f"/proc/{pid}/status").read_text(), re.M).group(1))


def zygote_of(pid: int) -> int:
    """The zygote above a forked kernel: kernel → pid 1 of its namespace → the first fork → it."""
    zygote = parent_of(parent_of(parent_of(pid)))
    command = Path(f"/proc/{zygote}/cmdline").read_bytes().split(b"\0")
    assert command[1:3] == [b"-s", b"-c"] and b"The fork server's own program" in command[3], command[:3]
    return zygote


def resident_and_proportional(pid: int) -> tuple[int, int]:
    rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
    rss, pss = (
        int(re.search(rf"^{name}:\s+(\d+) kB", rollup, re.M).group(1)) << 10 for name in ("Rss", "Pss")
    )
    return rss, pss


def the_kernel(sandbox: Sandbox) -> int:
    """The kernel's host pid: pid 2 of its namespace (pid 1 only reaps, under both)."""
    pids = kernel_pids(sandbox)
    kernels = [pid for pid in pids if pid_inside(pid) == 2]
    assert len(kernels) == 1, pids
    return kernels[0]


def pid_inside(pid: int) -> int:
    return int(re.search(r"^NSpid:.*\s(\d+)$", Path(f"/proc/{pid}/status").read_text(), re.M).group(1))


def test_kernels_are_forked_from_one_zygote_and_share_its_pages(make_sandbox) -> None:
    first, second = make_sandbox(), make_sandbox()
    kernels = [the_kernel(first), the_kernel(second)]
    zygotes = {zygote_of(pid) for pid in kernels}
    assert len(zygotes) == 1, "each kernel came from a zygote of its own"
    [zygote] = zygotes
    assert host_uid_of(zygote) == 0 and {host_uid_of(pid) for pid in kernels} != {0}
    assert host_uid_of(kernels[0]) != host_uid_of(kernels[1]), "two sandboxes share a host user"
    zygote_rss, _ = resident_and_proportional(zygote)
    for sandbox, pid in zip((first, second), kernels, strict=True):
        rss, pss = resident_and_proportional(pid)
        assert pss < rss / 2, f"a forked kernel shares too little: PSS {pss >> 20} of RSS {rss >> 20} MiB"
        charged = sandbox.get_info().memory_used
        assert charged is not None and charged < zygote_rss / 2, (
            f"its cgroup pays for {charged >> 20} MiB, the zygote holds {zygote_rss >> 20} MiB"
        )


def test_a_forked_kernel_is_confined_as_bubblewrap_confines_one(sandbox, make_bwrap_sandbox) -> None:
    forked = probe(sandbox, CONFINEMENT)
    started = probe(make_bwrap_sandbox(), CONFINEMENT)
    assert isinstance(forked, dict) and isinstance(started, dict)
    assert all(forked["refused"].values()), forked["refused"]
    assert forked["status"]["CapEff"] == "0000000000000000" and forked["status"]["NoNewPrivs"] == "1"
    # Under bubblewrap the sandbox's uid is 1000 in a user namespace, where a forked kernel is its
    # host uid (as under gVisor); its mounts are then shown in full rather than as the namespace's.
    assert forked == started


def test_forks_do_not_share_random_state(make_sandbox) -> None:
    code = "import random, numpy\nobserved = [random.random(), float(numpy.random.rand())]"
    first, second = probe(make_sandbox(), code), probe(make_sandbox(), code)
    assert isinstance(first, list) and isinstance(second, list)
    assert first[0] != second[0] and first[1] != second[1]


def test_forks_do_not_share_the_multiprocessing_authkey(make_sandbox) -> None:
    """The authkey authenticates multiprocessing's connections (managers, pools' listeners): one
    kernel that knew another's could speak to them. Both kernels must come from one zygote, or
    the test would pass without a fresh key."""
    code = "import multiprocessing\nobserved = multiprocessing.current_process().authkey.hex()"
    first, second = make_sandbox(), make_sandbox()
    assert zygote_of(the_kernel(first)) == zygote_of(the_kernel(second))
    keys = [probe(first, code), probe(second, code)]
    assert all(isinstance(key, str) and len(key) == 64 for key in keys), keys
    assert keys[0] != keys[1]


def test_a_killed_zygote_takes_its_kernels_and_the_next_one_starts_anew(
    sandboxd: SandboxdProcess, make_sandbox
) -> None:
    sandbox = make_sandbox()
    assert sandbox.run_code("x = 1").error is None
    zygote = zygote_of(the_kernel(sandbox))
    os.kill(zygote, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and Path(f"/proc/{zygote}").exists():
        time.sleep(0.1)
    died = sandbox.run_code("x")
    assert died.error is not None and died.error.name == "KernelDied", died
    assert sandbox.run_code("1 + 1").text == "2", "the sandbox got no new kernel"
    fresh = make_sandbox()
    assert fresh.run_code("1 + 1").text == "2"
    assert zygote_of(the_kernel(fresh)) != zygote
    assert "fork server for" in sandboxd.read_log()


def test_the_fork_server_can_be_turned_off(make_bwrap_sandbox) -> None:
    kernel = the_kernel(make_bwrap_sandbox())  # SANDBOXD_FORK_SERVER=false (bwrap_service.py)
    command = Path(f"/proc/{parent_of(kernel)}/cmdline").read_bytes()
    assert command.split(b"\0")[0].endswith(b"bwrap"), command
