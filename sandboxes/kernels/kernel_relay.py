"""sandboxd's end of a kernel's sockets: a unix socket per channel in a folder of sandboxd's own,
which sandboxd's ZeroMQ sockets connect to instead of the kernel's, each connection relayed to the
kernel's socket of that channel. What sandboxd sends goes through as it is; what the kernel sends
goes through a MessageGate, so no message costs sandboxd more than the budget, whatever its frames.

Reading is paused on one side while the other side's writes wait (asyncio's flow control), so a
connection holds at most about one message of the kernel's and one read beside what libzmq
queues.

A message dropped is read through, so that what the kernel sends after it still comes (a chart
too large to show does not take the cell's later output with it). But nothing waits on what is
dropped, so a kernel sending only oversized messages would keep sandboxd reading as fast as it
can write, where libzmq's full queue would have held it back: past an allowance of bytes read
through per kernel (a burst, refilled at a rate), the connection that would read more is ended
instead, which throws away what the kernel queued for it, as libzmq does with a message over
its own limit; sandboxd's socket connects again."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

from sandboxes.kernels.message_gate import BrokenStream, MessageGate

CONNECT_RETRY_SECONDS = 0.05  # while the kernel has not made its socket yet, or has closed it
SMALL_WRITE_BYTES = 64 << 10  # pieces up to this much in all are joined into one write
DISCARD_BYTES_PER_SECOND = 64 << 20  # how fast a kernel's dropped messages may be read through
DISCARD_BURST_BYTES = 32 << 20  # read through at once before that rate applies


class KernelRelay:
    """Relays sandboxd's connections to the sockets ``<kernel_prefix>-<port>`` of one kernel; the
    client connects to ``<prefix>-<port>`` instead. ``dropped`` counts the kernel's messages over
    ``budget`` bytes, on any channel, since the relay started."""

    def __init__(self, kernel_prefix: str, ports: Iterable[int], budget: int, *, root: Path | None) -> None:
        self.kernel_prefix = kernel_prefix
        self.ports = tuple(ports)
        self.budget = budget
        self.folder = Path(tempfile.mkdtemp(prefix="sbx-r-", dir=root))  # 0700: sandboxd's only
        self.prefix = str(self.folder / "k")
        self._servers: list[asyncio.Server] = []
        self._links: set[_Link] = set()
        self._dropped_on_closed_links = 0
        self._discard_allowance = float(DISCARD_BURST_BYTES)
        self._allowance_at = 0.0  # when the allowance was last refilled

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        for port in self.ports:
            upstream = f"{self.kernel_prefix}-{port}"
            server = await loop.create_unix_server(
                lambda upstream=upstream: _Link(self, upstream), path=f"{self.prefix}-{port}"
            )
            self._servers.append(server)

    @property
    def dropped(self) -> int:
        return self._dropped_on_closed_links + sum(link.gate.dropped for link in self._links)

    def may_discard(self, size: int) -> bool:
        """Charge ``size`` bytes read through to the allowance; False once it is spent."""
        now = asyncio.get_running_loop().time()
        refill = (now - self._allowance_at) * DISCARD_BYTES_PER_SECOND
        self._discard_allowance = min(DISCARD_BURST_BYTES, self._discard_allowance + refill) - size
        self._allowance_at = now
        return self._discard_allowance >= 0

    def close(self) -> None:
        """Stop listening and end every connection; safe to call twice."""
        for server in self._servers:
            server.close()
        self._servers = []
        for link in list(self._links):
            link.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def link_opened(self, link: _Link) -> None:
        self._links.add(link)

    def link_closed(self, link: _Link) -> None:
        if link in self._links:
            self._links.remove(link)
            self._dropped_on_closed_links += link.gate.dropped


class _Link(asyncio.Protocol):
    """One connection of sandboxd's, and the one it was given to the kernel's socket."""

    def __init__(self, relay: KernelRelay, upstream: str) -> None:
        self.relay = relay
        self.upstream = upstream
        self.gate = MessageGate(relay.budget)
        self.sandboxd: asyncio.Transport | None = None
        self.kernel: asyncio.Transport | None = None
        self._connecting: asyncio.Task[None] | None = None
        self._closed = False
        self._charged = 0  # of gate.discarded, what the relay's allowance was charged for
        self._early: list[bytes] = []  # sandboxd's bytes read before the kernel's end was there

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.sandboxd = transport
        transport.pause_reading()  # until the kernel's end is there to take it
        self.relay.link_opened(self)
        self._connecting = asyncio.get_running_loop().create_task(self._connect())

    async def _connect(self) -> None:
        loop = asyncio.get_running_loop()
        while not self._closed:
            with contextlib.suppress(OSError):
                transport, _ = await loop.create_unix_connection(lambda: _KernelEnd(self), self.upstream)
                break
            await asyncio.sleep(CONNECT_RETRY_SECONDS)
        else:
            return
        if self._closed:
            transport.close()
            return
        assert isinstance(transport, asyncio.Transport) and self.sandboxd is not None
        self.kernel = transport
        for piece in self._early:
            transport.write(piece)
        self._early.clear()
        self.sandboxd.resume_reading()

    def data_received(self, data: bytes) -> None:
        if self.kernel is not None:
            self.kernel.write(data)
        else:
            # Python before 3.11.3 (Debian 12's 3.11.2) starts reading a new connection even when
            # connection_made paused it: keep what came (the ZMTP greeting) for the kernel's end.
            self._early.append(bytes(data))

    def from_kernel(self, count: int) -> None:
        """``count`` bytes came into the gate's buffer from the kernel."""
        try:
            passed = self.gate.filled(count)
        except BrokenStream:
            self.close()
            return
        if passed and self.sandboxd is not None:
            self._pass_on(passed)
        discarded, self._charged = self.gate.discarded - self._charged, self.gate.discarded
        if discarded and not self.relay.may_discard(discarded):
            self.close()

    def _pass_on(self, pieces: list[bytes | bytearray]) -> None:
        assert self.sandboxd is not None
        if sum(len(piece) for piece in pieces) <= SMALL_WRITE_BYTES:
            self.sandboxd.write(b"".join(pieces))  # one system call for a read's small messages
            return
        for piece in pieces:
            if piece:
                self.sandboxd.write(memoryview(piece))  # what waits is copied once, by asyncio

    def pause_writing(self) -> None:  # sandboxd's end is full: read no more of the kernel's
        if self.kernel is not None:
            self.kernel.pause_reading()

    def resume_writing(self) -> None:
        if self.kernel is not None:
            self.kernel.resume_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        self.close()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.gate.end()
        for transport in (self.sandboxd, self.kernel):
            if transport is not None:
                transport.close()
        if self._connecting is not None:
            self._connecting.cancel()
        self.relay.link_closed(self)


class _KernelEnd(asyncio.BufferedProtocol):
    """Reads the kernel's bytes straight into the gate's buffer."""

    def __init__(self, link: _Link) -> None:
        self.link = link

    def get_buffer(self, sizehint: int) -> memoryview:
        return self.link.gate.buffer()

    def buffer_updated(self, nbytes: int) -> None:
        self.link.from_kernel(nbytes)

    def pause_writing(self) -> None:  # the kernel does not read: hold sandboxd's sending
        if self.link.sandboxd is not None:
            self.link.sandboxd.pause_reading()

    def resume_writing(self) -> None:
        if self.link.sandboxd is not None:
            self.link.sandboxd.resume_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        self.link.close()
