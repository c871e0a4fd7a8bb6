"""A saved namespace fed to its kernel through a named pipe in the workdir.

The kernel unpickles while the bytes arrive, so a restore waits for the slower of the two rather
than for both in turn, and the namespace never takes room on the sandbox's disk. The writer never
blocks: a kernel that never opens the pipe, or stops reading it, cannot hold one of our threads
once the load cell has ended (``stop``). Every byte is still read and checksummed, so a damaged
member raises SnapshotCorrupt even when the kernel gave up on it first.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import threading
from collections.abc import Iterator
from pathlib import Path

from sandboxes.server import files

PIPE_SIZE = 1 << 20  # Linux's default ceiling for an unprivileged pipe; fewer wake-ups than 64 KiB
OPEN_POLL = 0.001
WRITE_POLL_MS = 50


def feed(chunks: Iterator[memoryview], workdir: Path, path: str, stop: threading.Event) -> None:
    """Write ``chunks`` into the named pipe at ``path`` once the kernel opens it."""
    fd = _wait_for_reader(workdir, path, stop)
    if fd is not None:
        try:
            with contextlib.suppress(OSError):
                fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
            _send(fd, chunks, stop)
        except BrokenPipeError:
            pass  # the kernel stopped reading: its report says why
        finally:
            os.close(fd)
    for _ in chunks:  # what was not sent is checked all the same
        pass


def _wait_for_reader(workdir: Path, path: str, stop: threading.Event) -> int | None:
    while (fd := files.open_fifo_for_writing(workdir, path)) is None:
        if stop.wait(OPEN_POLL):
            return None
    return fd


def _send(fd: int, chunks: Iterator[memoryview], stop: threading.Event) -> None:
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    for chunk in chunks:
        view = memoryview(chunk)
        while view:
            try:
                view = view[os.write(fd, view) :]
            except BlockingIOError:
                if stop.is_set():
                    return
                poller.poll(WRITE_POLL_MS)
