"""A kernel's pickled namespace read from a named pipe in the workdir, straight into a snapshot.

The kernel pickles into the pipe while we copy what arrives into the snapshot file, so the
namespace never takes room on the sandbox's disk (a tmpfs, charged to the sandbox's memory): a
kernel holding more than half its memory limit can still be saved. The reader never blocks: a
kernel that never opens the pipe, or holds it open and silent, cannot keep one of our threads
once its save cell has ended (``stop``), and one that writes without end meets the snapshot's
size limit, which closes the pipe under it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import threading
from collections.abc import Callable

from sandboxes.server.snapshots.feed import PIPE_SIZE

CHUNK = 1 << 20
IDLE_POLL = 0.001  # the pipe has no writer: not yet opened by the kernel, or already closed
READ_POLL_MS = 50


def drain(fd: int, sink: Callable[[memoryview], None], stop: threading.Event) -> None:
    """Pass what arrives in the pipe ``fd`` to ``sink`` until ``stop`` is set and the pipe is
    empty; closes ``fd``."""
    try:
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
        _copy(fd, sink, stop)
    finally:
        os.close(fd)


def _copy(fd: int, sink: Callable[[memoryview], None], stop: threading.Event) -> None:
    buffer = memoryview(bytearray(CHUNK))
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while True:
        # Whether the save cell had ended before this read: only then may an empty pipe end the
        # drain. A kernel can open, write and close the pipe and end its cell while this thread
        # waits (a loaded machine), and those bytes are still in the pipe to read.
        stopping = stop.is_set()
        try:
            count = os.readv(fd, [buffer])
        except BlockingIOError:  # a writer has it open, with nothing to say yet
            if stopping:
                return
            poller.poll(READ_POLL_MS)
            continue
        if count:
            sink(buffer[:count])
        elif stopping:
            return
        else:
            stop.wait(IDLE_POLL)
