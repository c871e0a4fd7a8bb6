"""The seccomp filter bubblewrap puts on a sandbox's kernel: a BPF program built with libseccomp.

An allow list in the shape of Docker's default profile (moby/profiles seccomp/default.json): a
call is refused with EPERM unless seccomp_allowed.py names it, so a call the kernel adds next
year is refused until someone allows it there. A few calls Docker allows are refused here too
(DENIED_CALLS says which and why: ptrace and process_vm_readv/writev, file handles,
memfd_secret, the clock's adjustment, the new mount-table calls); clone may not make namespaces
and clone3 answers ENOSYS (glibc then falls back to clone), personality() takes only Docker's
values, and socket() only ALLOWED_FAMILIES.

A refused socket family fails with EOPNOTSUPP, not Docker's EPERM nor EAFNOSUPPORT: libzmq (the
kernel's messaging) lists the interfaces through netlink as it binds, takes EOPNOTSUPP as "no
netlink here" (as on WSL 1) and aborts the kernel on any other errno; and socket() itself never
answers EOPNOTSUPP for a family, so a test tells the filter's refusal from a family the kernel
lacks. glibc's address lookup falls back whatever the errno. Another architecture's calls
(i386's int 0x80, x32 on x86_64) kill the process: the filter knows only the native one.

Under gVisor the same DENIED_CALLS are refused by name and the rest allowed (oci_profile says why).
"""

from __future__ import annotations

import errno
import functools
import socket
import tempfile
from types import ModuleType
from typing import Any

from sandboxes.drivers.seccomp_allowed import ALLOWED_CALLS

DENIED_ERRNO = errno.EPERM
DENIED_FAMILY_ERRNO = errno.EOPNOTSUPP

# Calls the sandbox may not make, named for gVisor's filter (oci_profile) and the tests: under
# bubblewrap every call not allowed is refused, these among them (names the running architecture
# or libseccomp lacks are skipped).
DENIED_CALLS = (
    # io_uring runs calls outside this filter (its own socket, open, ...) and is a steady
    # source of kernel exploits; Docker dropped it from its allowlist in 2023.
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    # In-kernel programs, kernel keyrings, and the page-fault and profiling interfaces exploits use.
    "bpf",
    "keyctl",
    "add_key",
    "request_key",
    "userfaultfd",
    "perf_event_open",
    "memfd_secret",
    "modify_ldt",
    # Reading or changing other processes.
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "pidfd_getfd",
    # File handles address any inode of a file system, past the mount namespace's view.
    "name_to_handle_at",
    "open_by_handle_at",
    # The mount family, old and new API, and new namespaces.
    "mount",
    "umount2",
    "pivot_root",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "unshare",
    "setns",
    # The host's own: modules, kexec, reboot, swap, clocks, accounting, quotas, I/O ports.
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "reboot",
    "swapon",
    "swapoff",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "acct",
    "quotactl",
    "iopl",
    "ioperm",
    "syslog",
    "lookup_dcookie",
    "uselib",
    "ustat",
    "sysfs",
    "_sysctl",
    "nfsservctl",
    "vm86",
    "vm86old",
    # NUMA placement (Docker allows it only with CAP_SYS_NICE): moving pages between nodes and
    # binding memory to them reaches other processes' pages and the host's topology.
    "mbind",
    "move_pages",
    "migrate_pages",
    "set_mempolicy",
    "set_mempolicy_home_node",
    "get_mempolicy",
    # Allowed by Docker, refused here: the mount table by id (Linux 6.8), past /proc's view.
    "listmount",
    "statmount",
)

# socket() families the sandbox may open; AF_VSOCK reaches the hypervisor past the network
# namespace, AF_NETLINK and AF_PACKET talk to the kernel's network stack itself.
ALLOWED_FAMILIES = (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6)

# personality() values Docker allows: PER_LINUX, PER_LINUX32, UNAME26 and both, and the query.
ALLOWED_PERSONALITIES = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)

_ARG_BITS = 64
_ALL_ONES = (1 << _ARG_BITS) - 1


def _libseccomp() -> ModuleType:
    """pyseccomp, which loads libseccomp.so.2 as it is imported; OSError (the driver is then unavailable)
    without it."""
    try:
        import pyseccomp
    except (ImportError, RuntimeError, OSError) as exc:
        raise OSError(f"libseccomp is missing, so the seccomp filter cannot be built: {exc}") from exc
    return pyseccomp


def denied_calls() -> list[str]:
    """The names in DENIED_CALLS this architecture has."""
    seccomp = _libseccomp()
    return [name for name in DENIED_CALLS if seccomp.resolve_syscall(seccomp.Arch.NATIVE, name) >= 0]


# clone() flags that make namespaces, which no sandbox may make: it has no capability for any but
# a user namespace, and bubblewrap's --disable-userns refuses that; a forked kernel
# (sandboxes/forkserver) has no user namespace of its own to hold such a limit. Docker's profile
# refuses them to a container without CAP_SYS_ADMIN.
NAMESPACE_FLAGS = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
    "CLONE_NEWTIME": 0x00000080,
}
# clone3 passes its flags in memory, which a filter cannot read: answered ENOSYS, glibc falls back
# to clone() (Docker's answer too).
CLONE3_ERRNO = errno.ENOSYS


def allowed_calls() -> list[str]:
    """The names in ALLOWED_CALLS this architecture has (and libseccomp knows)."""
    seccomp = _libseccomp()
    return [name for name in ALLOWED_CALLS if seccomp.resolve_syscall(seccomp.Arch.NATIVE, name) >= 0]


@functools.cache
def program() -> bytes:
    """The compiled filter for this machine's architecture, as ``bwrap --seccomp FD`` and the fork
    server (prctl) read it.

    Raises OSError when libseccomp is missing: bubblewrap then refuses to start a sandbox.
    """
    seccomp = _libseccomp()
    rules = seccomp.SyscallFilter(seccomp.ERRNO(DENIED_ERRNO))
    rules.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.KILL_PROCESS)
    rules.set_attr(seccomp.Attr.CTL_OPTIMIZE, 2)  # a binary tree: every call pays a few compares, not 360
    for name in allowed_calls():
        rules.add_rule(seccomp.ALLOW, name)
    # Each conditional call gets rules that allow exactly the good arguments and, where its refusal
    # is not the default's EPERM, rules for exactly the rest: together they cover every value.
    for family in ALLOWED_FAMILIES:
        rules.add_rule(seccomp.ALLOW, "socket", seccomp.Arg(0, seccomp.MASKED_EQ, _ALL_ONES, family))
    refused_family = seccomp.ERRNO(DENIED_FAMILY_ERRNO)
    for mask, value in family_rules():
        rules.add_rule(refused_family, "socket", seccomp.Arg(0, seccomp.MASKED_EQ, mask, value))
    for persona in ALLOWED_PERSONALITIES:  # the kernel reads an unsigned int
        rules.add_rule(seccomp.ALLOW, "personality", seccomp.Arg(0, seccomp.MASKED_EQ, 0xFFFFFFFF, persona))
    namespaces = functools.reduce(int.__or__, NAMESPACE_FLAGS.values())
    rules.add_rule(seccomp.ALLOW, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, namespaces, 0))
    rules.add_rule(seccomp.ERRNO(CLONE3_ERRNO), "clone3")
    with tempfile.TemporaryFile() as out:
        rules.export_bpf(out)
        out.seek(0)
        return out.read()


@functools.cache
def oci_profile() -> dict[str, Any]:
    """DENIED_CALLS as an OCI runtime spec's ``linux.seccomp``, for gVisor (``runsc
    --oci-seccomp``), whose Sentry applies it to the calls the guest makes of it: the guest's
    calls never reach the host kernel, but each refused one is an entry point into the Sentry
    (its user namespaces, its mount and keyring code) that a sandbox needs no more than under
    bubblewrap. Names gVisor does not implement are harmless: it answers them ENOSYS anyway.

    A deny list, not bubblewrap's allow list: the guest's calls are answered by the Sentry's own
    table, where a call Linux adds next year is ENOSYS until gVisor implements it (listmount and
    statmount are, in the runsc of 2024; test_seccomp_under_gvisor.py), and then it is gVisor's
    code that answers it, never the host kernel's; and
    runsc (2024) ignores ``errnoRet`` and answers EPERM, where the allow list needs ENOSYS for
    clone3 (threads fall back to clone only on ENOSYS). Without the socket families for the same
    reason: libzmq aborts the kernel on EPERM (see above), and a guest's sockets are the Sentry's
    own network stack, with no vsock and no raw packets; the tests show both refused.
    """
    return {
        "defaultAction": "SCMP_ACT_ALLOW",
        "syscalls": [
            {"names": denied_calls(), "action": "SCMP_ACT_ERRNO", "errnoRet": DENIED_ERRNO},
            *(
                {
                    "names": ["personality"],
                    "action": "SCMP_ACT_ERRNO",
                    "errnoRet": DENIED_ERRNO,
                    "args": [{"index": 0, "value": mask, "valueTwo": value, "op": "SCMP_CMP_MASKED_EQ"}],
                }
                for mask, value in personality_rules()
            ),
        ],
    }


def refused(rules: list[tuple[int, int]], argument: int) -> bool:
    """Whether one of ``rules`` (masked compares on argument 0, ORed) matches ``argument``."""
    return any(argument & _ALL_ONES & mask == value for mask, value in rules)


def family_rules() -> list[tuple[int, int]]:
    """(mask, value) compares on socket()'s family, one per rule, true exactly outside ALLOWED_FAMILIES.

    A libseccomp rule may compare an argument only once, and rules are ORed, so "none of these" is
    spelt as the gaps between the allowed values, each cut into aligned power-of-two blocks (one
    masked compare each) up to the next power of two past the largest, then one compare per high
    bit. The kernel reads an int; a register with its upper half set is refused, never allowed.
    """
    allowed = sorted(ALLOWED_FAMILIES)
    top = 1 << allowed[-1].bit_length()
    rules = []
    start = 0
    for value in [*allowed, top]:
        rules += _blocks(start, value)
        start = value + 1
    return rules + [(1 << bit, 1 << bit) for bit in range(top.bit_length() - 1, _ARG_BITS)]


def _blocks(start: int, end: int) -> list[tuple[int, int]]:
    """Masked compares covering [start, end): the largest aligned power-of-two blocks that fit."""
    found = []
    while start < end:
        size = start & -start if start else 1 << end.bit_length()
        while start + size > end:
            size >>= 1
        found.append((_ALL_ONES & ~(size - 1), start))
        start += size
    return found


def personality_rules() -> list[tuple[int, int]]:
    """(mask, value) compares true exactly when personality()'s argument is not an allowed value.

    A value is refused when it sets a bit outside PER_LINUX32|UNAME26 and is not the all-ones
    query. Such a value has a run of set bits (read cyclically) holding an outside bit and ending
    next to a clear bit; "bit k set, its neighbour clear" for every outside k in both directions
    catches the run unless its two ends are the inside bits 3 and 17, and two more compares catch
    those runs (bits 3..17, and 17 round to 3). The kernel reads an unsigned int, so the masks
    ignore the register's upper half, as the kernel does.
    """
    inside = 0
    for value in ALLOWED_PERSONALITIES[:-1]:
        inside |= value
    assert ALLOWED_PERSONALITIES[-1] == 0xFFFFFFFF and inside == 0x20008

    def set_and_clear(k: int, j: int) -> tuple[int, int]:
        return (1 << k) | (1 << j), 1 << k

    rules = []
    for k in range(32):
        if not inside >> k & 1:
            rules += [set_and_clear(k, (k + 1) % 32), set_and_clear(k, (k - 1) % 32)]
    return [*rules, set_and_clear(4, 18), set_and_clear(18, 4)]
