"""Bytes both ways between the sandbox's socket and the destination's, counted as they pass.

Each direction is a thread of its own moving the bytes with splice(2) through a pipe, never
through Python's memory: three to four times what asyncio's own socket calls moved (which reached
an eighth of a direct read's throughput: benchmarks/egress.py). A connection costs two threads
while it lasts; the sockets are shut down and closed on the event loop's thread alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import functools
import os
import socket
import struct
import termios
import threading
from collections.abc import Callable

from sandboxes.server.egress.connection_log import Record

CHUNK = 1 << 20
SEND_BUFFER = 4 << 20  # the most the host allows by default (net.core.wmem_max): fewer stalls
COUNT_EVERY = 16 << 20  # bytes a direction moves between two updates of its counts
F_SETPIPE_SZ = 1031
CONNECT_SECONDS = 10.0


async def connect(address: str, port: int, timeout: float = CONNECT_SECONDS) -> socket.socket:
    """A connected non-blocking socket to ``address`` (already resolved and checked: policy.py).
    Raises OSError, or TimeoutError after ``timeout`` seconds."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setblocking(False)
    try:
        await asyncio.wait_for(asyncio.get_running_loop().sock_connect(sock, (address, port)), timeout)
    except BaseException:
        sock.close()
        raise
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


async def relay(inside: socket.socket, outside: socket.socket, record: Record, first: bytes = b"") -> None:
    """Until both directions end: what ``inside`` sends goes to ``outside`` (after ``first``) and
    back. Both sockets are closed at the end; cancelled, both are shut down first, which ends the
    threads."""
    loop = asyncio.get_running_loop()
    try:
        if first:
            await loop.sock_sendall(outside, first)
            record.count_out(len(first))
        ended = loop.create_future()
        left = [2]

        def soon(callback: Callable[..., None], *args: object) -> None:
            with contextlib.suppress(RuntimeError):  # sandboxd is stopping: its loop is closed
                loop.call_soon_threadsafe(callback, *args)

        def finished(source: socket.socket, target: socket.socket, clean: bool) -> None:
            """A direction's end, told by its thread and acted on here, in the order of what
            the thread told before it (its counts): the log is up to date before the sandbox
            (or the destination) sees the end."""
            if clean:
                ending = [(target, socket.SHUT_WR)]
            else:
                ending = [(source, socket.SHUT_RDWR), (target, socket.SHUT_RDWR)]
            for sock, how in ending:
                with contextlib.suppress(OSError):
                    sock.shutdown(how)
            left[0] -= 1
            if left[0] == 0 and not ended.done():
                ended.set_result(None)

        for sock in (inside, outside):
            sock.setblocking(True)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
        for source, target, add in ((inside, outside, record.count_out), (outside, inside, record.count_in)):
            counted = functools.partial(soon, add)
            end = functools.partial(soon, finished, source, target)
            threading.Thread(
                target=_pump, args=(source.fileno(), target.fileno(), counted, end), daemon=True
            ).start()
        try:
            await asyncio.shield(ended)
        except asyncio.CancelledError:
            for sock in (inside, outside):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
            await ended  # the threads end at once, then their sockets may be closed
            raise
    finally:
        inside.close()
        outside.close()
        record.end()


def _pump(source: int, target: int, count: Callable[[int], None], end: Callable[[bool], None]) -> None:
    """Move bytes from ``source`` to ``target`` until the end of ``source`` (``end(True)``) or an
    error on either (``end(False)``: a reset ends both directions). Touches neither socket after
    telling ``end``: they may be closed from then on."""
    read_end, write_end = os.pipe()
    uncounted = 0  # told in batches while a stream flows: each telling wakes sandboxd's event loop
    clean = False
    try:
        with contextlib.suppress(OSError):
            fcntl.fcntl(write_end, F_SETPIPE_SZ, CHUNK)
        while size := os.splice(source, write_end, CHUNK):
            # Counted before they are passed on: whoever sees them arrive, then asks sandboxd
            # for the log, finds them in it.
            uncounted += size
            if uncounted >= COUNT_EVERY or not _waiting(source):  # a stream's middle, or a pause
                count(uncounted)
                uncounted = 0
            while size:
                size -= os.splice(read_end, target, size)
        clean = True
    except OSError:
        pass
    finally:
        os.close(read_end)
        os.close(write_end)
        if uncounted:
            count(uncounted)
        end(clean)


def _waiting(fd: int) -> int:
    """Bytes received on socket ``fd`` and not read yet."""
    return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0" * 4))[0]
