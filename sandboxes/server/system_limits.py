"""The host's limits sandboxd runs into: its own open-files limit, set at start, and the
system errors that mean "no room now" (open files, processes, memory), reported as CapacityExceeded
with the reason rather than as a bare 500. A kernel holds about 18 descriptors of sandboxd's, so
the common soft limit of 1,024 stopped the service at its 56th sandbox."""

from __future__ import annotations

import errno
import logging
import resource
from pathlib import Path

from sandboxes.errors import CapacityExceeded

log = logging.getLogger(__name__)
NR_OPEN = Path("/proc/sys/fs/nr_open")  # the most a process may be allowed
OWN_FILES = Path("/proc/self/fd")
# Measured: a kernel holds 18 of sandboxd's descriptors (ZeroMQ sockets, pipes, its cgroup).
FILES_PER_KERNEL = 24
# Kept free for what the service itself needs to go on: connections, file transfers, snapshots.
# Run out of descriptors, it cannot even accept the request that would free some.
FILES_HEADROOM = 64

REASONS = {
    errno.EMFILE: "sandboxd has used all the open files it may ({limit}); raise SANDBOXD_OPEN_FILES"
    " (and its hard limit, LimitNOFILE) or run fewer sandboxes",
    errno.ENFILE: "the host's table of open files is full (fs.file-max)",
    errno.EAGAIN: "the host cannot start another process now (a process or thread limit)",
    errno.ENOMEM: "the host has no memory left to start another kernel",
}


def set_open_files_limit(wanted: int) -> int:
    """Set sandboxd's limit on open files to ``wanted``: the soft limit, and the hard one too
    where it is lower and we may raise it (as root, up to fs.nr_open); otherwise as far as the
    hard limit allows. Returns the limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = max(64, min(wanted, _nr_open()))
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, max(wanted, hard)))
    except (ValueError, OSError):  # not root: the hard limit is as far as we may go
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))
    now = open_files_limit()
    log.info("open files: at most %d (the limit was %d, %d at most)", now, soft, hard)
    return now


def _nr_open() -> int:
    try:
        return int(NR_OPEN.read_text())
    except (OSError, ValueError):
        return 1 << 20


def open_files_limit() -> int:
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def check_room_for_a_kernel() -> None:
    """Raises CapacityExceeded when starting one more kernel would leave sandboxd too few open
    files to serve on: refused before, rather than failing halfway through a kernel's start."""
    limit = open_files_limit()
    in_use = len(list(OWN_FILES.iterdir()))
    if in_use + FILES_PER_KERNEL + FILES_HEADROOM > limit:
        raise CapacityExceeded(
            f"no room for this now: {REASONS[errno.EMFILE].format(limit=limit)}"
            f" ({in_use} are in use, and a kernel needs about {FILES_PER_KERNEL})"
        )


def capacity_error(exc: BaseException) -> CapacityExceeded | None:
    """The CapacityExceeded that ``exc`` means (an OSError, or pyzmq's ZMQError, that carries a
    system limit's errno), or None when it is something else."""
    number = getattr(exc, "errno", None)
    reason = REASONS.get(number) if isinstance(number, int) else None
    if reason is None:
        return None
    return CapacityExceeded(f"no room for this now: {reason.format(limit=open_files_limit())}")
