"""The seccomp filter under bubblewrap: each call it refuses fails inside a sandbox, with its errno.

The filter is an allow list in the shape of Docker's default profile (moby/profiles
seccomp/default.json): the calls it names as denied, calls no rule allows (among them one newer
than any rule), and the families and personalities follow it; sandboxes/drivers/seccomp_filter.py
says why each is there. One kernel cell makes every call through ctypes with harmless arguments (null
pointers, bad descriptors, zero counts), chosen where possible so that the kernel itself would
answer something other than EPERM (EFAULT, EBADF, EINVAL, or success): an EPERM then comes from
the filter, not from the namespace's missing capabilities. Each call is its own test over the
results a module-scoped fixture collects, so the whole file costs one sandbox and a few cells.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import platform
import signal
import socket
import textwrap

import pytest

from sandboxes import Sandbox
from sandboxes.drivers import seccomp_filter
from tests.sandboxd_process import SandboxdProcess
from tests.sandboxes.test_escape import probe

pytestmark = pytest.mark.escape


def _number(name: str) -> int:
    import pyseccomp

    return int(pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, name))


AT_FDCWD = -100
O_CLOEXEC = 0o2000000
UFFD_USER_MODE_ONLY = 1
PTRACE_PEEKDATA = 2
KCMP_VM = 1
KEYCTL_GET_KEYRING_ID = 0
KEY_SPEC_SESSION_KEYRING = -3

# Arguments per call; a str is passed as a C string, "pid" as the kernel's own pid.
CALL_ARGUMENTS: dict[str, tuple[object, ...]] = {
    "io_uring_setup": (1, 0),  # a null params pointer: EFAULT unfiltered
    "io_uring_enter": (-1, 0, 0, 0, 0, 0),
    "io_uring_register": (-1, 0, 0, 0),
    "bpf": (0, 0, 0),
    "keyctl": (KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0),
    "add_key": (0, 0, 0, 0, 0),
    "request_key": (0, 0, 0, 0),
    "userfaultfd": (UFFD_USER_MODE_ONLY | O_CLOEXEC,),  # allowed unprivileged: succeeds unfiltered
    "perf_event_open": (0, 0, -1, -1, 0),
    "memfd_secret": (O_CLOEXEC,),
    "modify_ldt": (0, 0, 0),
    "ptrace": (PTRACE_PEEKDATA, "pid", 0, 0),
    "process_vm_readv": ("pid", 0, 0, 0, 0, 0),
    "process_vm_writev": ("pid", 0, 0, 0, 0, 0),
    "kcmp": ("pid", "pid", KCMP_VM, 0, 0),
    "pidfd_getfd": (-1, 0, 0),
    "name_to_handle_at": (AT_FDCWD, 0, 0, 0, 0),
    "open_by_handle_at": (-1, 0, 0),
    "mount": (0, 0, 0, 0, 0),
    "umount2": (0, 0),
    "pivot_root": (0, 0),
    "fsopen": (0, 0),
    "fsconfig": (-1, 0, 0, 0, 0),
    "fsmount": (-1, 0, 0),
    "fspick": (-1, 0, 0),
    "move_mount": (-1, 0, -1, 0, 0),
    "open_tree": (AT_FDCWD, "/", O_CLOEXEC),  # an O_PATH-like descriptor unfiltered
    "mount_setattr": (-1, 0, 0, 0, 0),
    "unshare": (0,),  # unshare(nothing) succeeds unfiltered
    "setns": (-1, 0),
}
DEFAULT_ARGUMENTS = (0, 0, 0, 0)  # the host-wide calls (modules, clocks, reboot...): null everything

DENIED_FAMILIES = {
    "AF_VSOCK": (int(socket.AF_VSOCK), int(socket.SOCK_STREAM), 0),
    "AF_NETLINK": (int(socket.AF_NETLINK), int(socket.SOCK_RAW), 0),
    "AF_PACKET": (int(socket.AF_PACKET), int(socket.SOCK_RAW), 0),
    "AF_ALG": (int(socket.AF_ALG), int(socket.SOCK_SEQPACKET), 0),
}
# Calls no rule allows, refused by the filter's default (an allow list) rather than by name:
# number and arguments. listmount and statmount (Linux 6.8) are newer than this libseccomp, which
# has no name for them; calls from 424 on have one number on every architecture. 600 is a number
# no kernel has assigned yet: a call added next year. Unfiltered, the host answers each with
# something other than EPERM (test_unlisted_calls_are_refused checks that on the host).
UNLISTED_CALLS: dict[str, tuple[int, tuple[int, ...]]] = {
    "listmount": (457, (0, 0, 0, 0)),  # a null request: EFAULT unfiltered
    "statmount": (458, (0, 0, 0, 0)),
    "mbind": (_number("mbind"), (0, 0, 0, 0, 0, 0)),  # an empty range: succeeds unfiltered
    "move_pages": (_number("move_pages"), (0, 0, 0, 0, 0, 0)),  # no pages: succeeds unfiltered
    "unassigned 600": (600, ()),  # ENOSYS unfiltered
}
ADDR_NO_RANDOMIZE = 0x0040000
READ_IMPLIES_EXEC = 0x0400000
PER_LINUX32 = 0x0008

PROBE = """
import ctypes, errno, json, os, socket
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def call(number, *args):
    args = [os.getpid() if a == 'pid' else ctypes.c_char_p(a.encode()) if isinstance(a, str)
            else ctypes.c_long(a) for a in args]
    ctypes.set_errno(0)
    result = libc.syscall(ctypes.c_long(number), *args)
    code = ctypes.get_errno()
    return {'result': result, 'errno': errno.errorcode.get(code, str(code)) if result < 0 else None}
observed = {'calls': {}, 'families': {}, 'allowed': {}, 'unlisted': {}}
for name, (number, args) in UNLISTED.items():
    observed['unlisted'][name] = call(number, *args)
for name, (number, args, returns_fd) in CALLS.items():
    outcome = observed['calls'][name] = call(number, *args)
    if returns_fd and outcome['result'] > 2:
        os.close(outcome['result'])
for name, (family, kind, proto) in FAMILIES.items():
    try:
        socket.socket(family, kind, proto).close()
        observed['families'][name] = 'OPENED'
    except OSError as exc:
        observed['families'][name] = errno.errorcode.get(exc.errno, str(exc.errno))
# AF_VSOCK with the register's upper half set: the kernel reads an int, 40.
wide = call(SOCKET, (1 << 32) | socket.AF_VSOCK, socket.SOCK_STREAM, 0)
if wide['result'] >= 0:
    os.close(wide['result'])
observed['families']['AF_VSOCK, upper bits set'] = wide['errno'] or 'OPENED'
for name, value in PERSONALITIES.items():
    observed['calls'][name] = call(PERSONALITY, value)
    call(PERSONALITY, 0)
observed['personality query'] = call(PERSONALITY, 0xFFFFFFFF)
observed['allowed']['socketpair AF_UNIX'] = len(socket.socketpair(socket.AF_UNIX)) == 2
for label, family, loopback in [('AF_INET', socket.AF_INET, '127.0.0.1'),
                                ('AF_INET6', socket.AF_INET6, '::1')]:
    try:  # a round trip over the sandbox's own loopback: nothing is sent past it
        with socket.socket(family, socket.SOCK_STREAM) as server:
            server.bind((loopback, 0))
            server.listen()
            with socket.create_connection(server.getsockname()[:2], timeout=3):
                observed['allowed'][label] = 'CONNECTED'
    except OSError as exc:
        observed['allowed'][label] = errno.errorcode.get(exc.errno, type(exc).__name__)
import subprocess, sys
x32 = 'import ctypes; ctypes.CDLL(None).syscall(0x40000000 | %d)' % GETPID  # x32's getpid
observed['x32 call'] = subprocess.run([sys.executable, '-c', x32]).returncode
with open('/proc/self/status') as f:
    observed['status'] = [line.strip() for line in f if line.startswith('Seccomp')]
print('OBSERVED=' + json.dumps(observed))
"""


def _calls() -> dict[str, tuple[int, tuple[object, ...], bool]]:
    returns_fd = {"userfaultfd", "memfd_secret", "open_tree", "perf_event_open", "io_uring_setup", "fsopen"}
    return {
        name: (_number(name), CALL_ARGUMENTS.get(name, DEFAULT_ARGUMENTS), name in returns_fd)
        for name in seccomp_filter.denied_calls()
    }


PERSONALITY_CHANGES = {
    "personality ADDR_NO_RANDOMIZE": ADDR_NO_RANDOMIZE,
    "personality READ_IMPLIES_EXEC": READ_IMPLIES_EXEC,
    "personality PER_LINUX32|ADDR_NO_RANDOMIZE": PER_LINUX32 | ADDR_NO_RANDOMIZE,
}


def observe(process: SandboxdProcess) -> dict:
    """Every call made once in a kernel of ``process``, which must then still answer a cell."""
    target = Sandbox.create(url=process.url, token=process.token)
    try:
        cell = "\n".join(
            [
                f"CALLS = {_calls()!r}",
                f"FAMILIES = {DENIED_FAMILIES!r}",
                f"SOCKET = {_number('socket')}",
                f"PERSONALITY = {_number('personality')}",
                f"GETPID = {_number('getpid')}",
                f"UNLISTED = {UNLISTED_CALLS!r}",
                f"PERSONALITIES = {dict(PERSONALITY_CHANGES)!r}",
                textwrap.dedent(PROBE),
            ]
        )
        execution = target.run_code(cell, timeout=60)
        assert execution.error is None, f"{execution.error}\n{execution.stderr}"
        [line] = [line for line in execution.stdout.splitlines() if line.startswith("OBSERVED=")]
        found = json.loads(line.removeprefix("OBSERVED="))
        found["serves on"] = target.run_code("6 * 7").text
        return found
    finally:
        target.kill()
        target.close()


@pytest.fixture(scope="module")
def observed(bwrap_sandboxd: SandboxdProcess) -> dict:
    """``bwrap_sandboxd`` (conftest.py) runs under bubblewrap whatever "auto" picks: the filter is
    bubblewrap's (test_seccomp_under_gvisor.py has gVisor's)."""
    return observe(bwrap_sandboxd)


def test_the_kernel_runs_under_one_filter_and_serves_on(observed, bwrap_sandboxd):
    assert "isolation driver: bwrap" in bwrap_sandboxd.read_log()
    assert observed["status"] == ["Seccomp:\t2", "Seccomp_filters:\t1"]
    assert observed["serves on"] == "42"
    assert bwrap_sandboxd.process is not None and bwrap_sandboxd.process.poll() is None
    fresh = Sandbox.create(url=bwrap_sandboxd.url, token=bwrap_sandboxd.token)
    try:
        assert fresh.run_code("6 * 7").text == "42"
    finally:
        fresh.kill()
        fresh.close()


@pytest.mark.parametrize("name", [*seccomp_filter.denied_calls(), *PERSONALITY_CHANGES])
def test_denied_call_fails_with_eperm(observed, name):
    assert observed["calls"][name] == {"result": -1, "errno": "EPERM"}


@pytest.mark.parametrize("name", UNLISTED_CALLS)
def test_unlisted_calls_are_refused(observed, name):
    """The filter is an allow list: calls it does not name are refused with EPERM, those newer
    than any rule (listmount, statmount, 600) among them. The host, unfiltered, answers otherwise."""
    number, args = UNLISTED_CALLS[name]
    assert unfiltered_errno(number, *args) != "EPERM"
    assert observed["unlisted"][name] == {"result": -1, "errno": "EPERM"}


def test_forked_kernels_refuse_the_unlisted_calls_too(sandbox):
    """The default sandboxd of the tests forks its kernels (sandboxes/forkserver), under the same
    program the fork applies itself; the threads and processes a kernel starts still run."""
    observed = probe(
        sandbox,
        f"""
        import ctypes, errno, multiprocessing, threading
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        observed = {{}}
        for name, (number, args) in {UNLISTED_CALLS!r}.items():
            ctypes.set_errno(0)
            result = libc.syscall(ctypes.c_long(number), *(ctypes.c_long(arg) for arg in args))
            observed[name] = errno.errorcode.get(ctypes.get_errno()) if result < 0 else None
        thread = threading.Thread(target=observed.setdefault, args=('thread', 'ran'))
        thread.start()
        thread.join()
        with multiprocessing.get_context('fork').Pool(2) as pool:
            observed['pool'] = pool.map(abs, [-1, -2])
        """,
    )
    assert observed == {**dict.fromkeys(UNLISTED_CALLS, "EPERM"), "thread": "ran", "pool": [1, 2]}


def unfiltered_errno(number: int, *args: int) -> str | None:
    """What this (the test's own, unfiltered) process is told by the host kernel for the call."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    ctypes.set_errno(0)
    result = libc.syscall(ctypes.c_long(number), *(ctypes.c_long(arg) for arg in args))
    return errno.errorcode.get(ctypes.get_errno()) if result < 0 else None


@pytest.mark.parametrize("name", [*DENIED_FAMILIES, "AF_VSOCK, upper bits set"])
def test_denied_socket_family_is_not_supported(observed, name):
    assert observed["families"][name] == errno.errorcode[errno.EOPNOTSUPP]  # "ENOTSUP": the same number


def assert_the_allowed_families_work(allowed: dict[str, object]) -> None:
    """The filter refuses families, not IP: a kernel's own loopback serves (test_escape.py reads
    that no route leads anywhere else). IPv6 may have no ::1 inside, but its socket opens."""
    assert allowed["socketpair AF_UNIX"] is True
    assert allowed["AF_INET"] == "CONNECTED", allowed
    assert allowed["AF_INET6"] in {"CONNECTED", "EADDRNOTAVAIL"}, allowed


def test_allowed_families_still_open_and_work_over_the_sandboxs_loopback(observed):
    assert_the_allowed_families_work(observed["allowed"])


def test_personality_can_still_be_queried(observed):
    assert observed["personality query"]["errno"] is None
    assert observed["personality query"]["result"] == 0  # PER_LINUX, restored after each attempt


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x32 is an x86_64 ABI")
def test_another_architectures_call_kills_the_process(observed):
    assert observed["x32 call"] == -signal.SIGSYS  # unfiltered: ENOSYS (no x32 here) or a pid


def test_the_rules_refuse_exactly_what_docker_refuses():
    """The masked compares, checked in Python: socket families and personality values."""
    families = seccomp_filter.family_rules()
    assert [v for v in range(4096) if not seccomp_filter.refused(families, v)] == [1, 2, 10]
    for wide in (1 << 32 | socket.AF_INET, -1, 1 << 63, 1 << 40):
        assert seccomp_filter.refused(families, wide)
    personalities = seccomp_filter.personality_rules()
    allowed = {0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF}
    values = [*range(1 << 18), *(~(1 << b) & 0xFFFFFFFF for b in range(32))]
    values += [
        ((1 << n) - 1) << s & 0xFFFFFFFF | ((1 << n) - 1) >> (32 - s) for n in range(1, 33) for s in range(32)
    ]
    values += [int.from_bytes(os.urandom(4)) for _ in range(20000)]
    for value in values:
        assert seccomp_filter.refused(personalities, value) == (value not in allowed), hex(value)
    assert errno.EOPNOTSUPP == seccomp_filter.DENIED_FAMILY_ERRNO
