"""The relay between sandboxd's ZeroMQ sockets and a kernel's: real libzmq at both ends (a kernel's
ROUTER and PUB, sandboxd's DEALER and SUB, as jupyter_client makes them), and a message of many
frames, each under the size limit, dropped whole when together they are over it; the stream read
as strictly as libzmq reads it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
import zmq
import zmq.asyncio

from sandboxes.kernels import kernel_relay
from sandboxes.kernels.kernel_relay import KernelRelay
from sandboxes.kernels.message_gate import GREETING_BYTES, BrokenStream, MessageGate

BUDGET = 1 << 20
MANY_FRAMES = [b"f" * 300_000] * 4  # each frame under the budget, together over it


@pytest_asyncio.fixture
async def relayed(tmp_path: Path) -> AsyncIterator[tuple[Sockets, KernelRelay, str]]:
    """A ZeroMQ context for both ends, a relay for ports 1 and 2, and the kernel's own prefix."""
    context = Sockets()
    kernel_prefix = str(tmp_path / "kernel")
    relay = KernelRelay(kernel_prefix, [1, 2], BUDGET, root=tmp_path)
    await relay.start()
    yield context, relay, kernel_prefix
    relay.close()
    context.close_all()


class Sockets(zmq.asyncio.Context):
    """A context that closes the sockets it made (destroy() leaves them to the collector)."""

    made: list[zmq.asyncio.Socket]

    def socket(self, *args, **kwargs):
        sock = super().socket(*args, **kwargs)
        self.made = [*getattr(self, "made", []), sock]
        return sock

    def close_all(self) -> None:
        for sock in getattr(self, "made", []):
            sock.close(linger=0)
        self.term()


async def received(socket: zmq.asyncio.Socket, timeout: float = 5.0) -> list[bytes]:
    return await asyncio.wait_for(socket.recv_multipart(), timeout)


@pytest.mark.asyncio
async def test_a_message_of_many_frames_over_the_budget_is_dropped_whole(relayed):
    context, relay, kernel_prefix = relayed
    kernel = context.socket(zmq.ROUTER)  # the kernel's shell
    kernel.bind(f"ipc://{kernel_prefix}-1")
    sandboxd = context.socket(zmq.DEALER)
    sandboxd.connect(f"ipc://{relay.prefix}-1")

    await sandboxd.send_multipart([b"execute_request", b"1 + 1"])  # sandboxd's way, as it is
    identity, *request = await received(kernel)
    assert request == [b"execute_request", b"1 + 1"]

    await kernel.send_multipart([identity, b"reply", b"2"])
    await kernel.send_multipart([identity, b"big", *MANY_FRAMES])
    await kernel.send_multipart([identity, b"after", b"x" * (BUDGET - len(b"after"))])  # at the budget
    assert await received(sandboxd) == [b"reply", b"2"]
    assert (await received(sandboxd))[0] == b"after"  # the big one never came
    assert relay.dropped == 1

    await sandboxd.send_multipart([b"again"])  # the connection lives on
    assert (await received(kernel))[1:] == [b"again"]


@pytest.mark.asyncio
async def test_a_publisher_flooding_many_frame_messages_reaches_its_subscriber_only_in_small_ones(relayed):
    context, relay, kernel_prefix = relayed
    kernel = context.socket(zmq.PUB)  # the kernel's iopub
    kernel.bind(f"ipc://{kernel_prefix}-2")
    sandboxd = context.socket(zmq.SUB)
    sandboxd.setsockopt(zmq.SUBSCRIBE, b"")  # the subscription goes to the kernel through the relay
    sandboxd.connect(f"ipc://{relay.prefix}-2")
    while not await sandboxd.poll(50):  # ZeroMQ's slow joiner: until the subscription arrived
        await kernel.send_multipart([b"hello"])
    await sandboxd.recv_multipart()

    for _ in range(20):
        await kernel.send_multipart([b"big", *MANY_FRAMES])
    await kernel.send_multipart([b"small", b"output"])
    assert await received(sandboxd) == [b"small", b"output"]
    assert relay.dropped == 20


@pytest.mark.asyncio
async def test_past_the_discard_allowance_the_connection_ends_with_what_the_kernel_queued(
    relayed, monkeypatch
):
    """Nothing waits on a dropped message, so without an allowance a kernel sending only
    oversized ones would keep sandboxd's loop reading as fast as the kernel writes."""
    monkeypatch.setattr(kernel_relay, "DISCARD_BURST_BYTES", 2 * BUDGET)
    monkeypatch.setattr(kernel_relay, "DISCARD_BYTES_PER_SECOND", 1)  # past the burst, never again
    context, _, kernel_prefix = relayed
    relay = KernelRelay(kernel_prefix, [1], BUDGET, root=None)  # made after the patches
    await relay.start()
    kernel = context.socket(zmq.ROUTER)
    kernel.bind(f"ipc://{kernel_prefix}-1")
    sandboxd = context.socket(zmq.DEALER)
    sandboxd.connect(f"ipc://{relay.prefix}-1")
    try:
        await sandboxd.send_multipart([b"hello"])
        identity, _ = await received(kernel)
        for _ in range(5):
            await kernel.send_multipart([identity, b"big", *MANY_FRAMES], copy=False)
        await asyncio.sleep(0.5)
        assert relay.dropped == 2  # one read through, one ended with its connection, three thrown away
        await sandboxd.send_multipart([b"again"])  # ZeroMQ connected again by itself
        identity, _ = await received(kernel)
        await kernel.send_multipart([identity, b"after"])
        assert await received(sandboxd) == [b"after"]
    finally:
        relay.close()


@pytest.mark.asyncio
async def test_sandboxd_waits_for_a_kernel_that_has_not_made_its_socket_yet(relayed):
    context, relay, kernel_prefix = relayed
    sandboxd = context.socket(zmq.DEALER)
    sandboxd.connect(f"ipc://{relay.prefix}-1")
    await sandboxd.send_multipart([b"early"])
    await asyncio.sleep(0.3)
    kernel = context.socket(zmq.ROUTER)
    kernel.bind(f"ipc://{kernel_prefix}-1")
    assert (await received(kernel))[1:] == [b"early"]


@pytest.mark.asyncio
async def test_a_kernel_that_breaks_the_protocol_loses_its_connection(relayed, tmp_path):
    """A kernel that writes what is not ZMTP 3 as libzmq reads it: the relay ends the connection
    rather than let sandboxd's libzmq read it another way."""
    context, relay, kernel_prefix = relayed
    written = asyncio.Event()

    async def fake_kernel(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"\xff" + b"\0" * 8 + b"\x7f" + b"\x01")  # ZMTP 2's revision 1
        await writer.drain()
        written.set()
        await reader.read()  # until the relay ends it
        writer.close()

    server = await asyncio.start_unix_server(fake_kernel, f"{kernel_prefix}-1")
    sandboxd = context.socket(zmq.DEALER)
    monitor = sandboxd.get_monitor_socket(zmq.EVENT_DISCONNECTED)
    sandboxd.connect(f"ipc://{relay.prefix}-1")
    await asyncio.wait_for(written.wait(), 5)
    assert await monitor.poll(5000)
    server.close()


def frame(body: bytes, *, more: bool = False, command: bool = False, long: bool = False) -> bytes:
    flags = (0x01 if more else 0) | (0x04 if command else 0)
    if long or len(body) > 255:
        return bytes([flags | 0x02]) + len(body).to_bytes(8, "big") + body
    return bytes([flags, len(body)]) + body


GREETING = b"\xff" + b"\0" * 7 + b"\x01\x7f" + b"\x03\x01" + b"NULL".ljust(20, b"\0") + b"\0" * 32
READY = frame(b"\x05READY\x0bSocket-Type\0\0\0\x06ROUTER", command=True)


def test_the_greeting_and_commands_pass_and_messages_pass_whole():
    assert len(GREETING) == GREETING_BYTES
    small = frame(b"a", more=True) + frame(b"b" * 300, more=True) + frame(b"", long=True)
    stream = GREETING + READY + small
    gate = MessageGate(budget=1000)
    assert b"".join(gate.feed(stream)) == stream
    one_byte_at_a_time = MessageGate(budget=1000)
    assert b"".join(b"".join(one_byte_at_a_time.feed(bytes([b]))) for b in stream) == stream


def test_a_message_over_the_budget_is_read_through_and_dropped():
    over = frame(b"a" * 600, more=True) + frame(b"b" * 600)
    after = frame(b"c")
    gate = MessageGate(budget=1000)
    passed = gate.feed(GREETING + over[:700]) + gate.feed(over[700:] + after)
    assert b"".join(passed) == GREETING + after
    assert gate.dropped == 1


@pytest.mark.parametrize(
    "stream",
    [
        b"\x00" + GREETING[1:],  # ZMTP 1's unversioned start
        GREETING[:10] + b"\x02" + GREETING[11:],  # ZMTP 2
        GREETING[:12] + b"CURVE".ljust(20, b"\0") + GREETING[32:],
        GREETING + bytes([0x08, 1]) + b"x",  # an unknown flag
        GREETING + frame(b"a", more=True) + READY,  # a command inside a message
        GREETING + frame(b"c" * 2000, command=True),  # a command over the budget
    ],
)
def test_what_libzmq_would_read_another_way_ends_the_stream(stream):
    with pytest.raises(BrokenStream):
        MessageGate(budget=1000).feed(stream)


def _add_reader_as_before_3_11_3(self, fd, callback, *args):
    """asyncio's transports before Python 3.11.3: a reader added even when paused."""
    if self._closing:
        return
    self._loop._add_reader(fd, callback, *args)


@pytest.mark.asyncio
async def test_what_sandboxd_sends_before_the_kernel_listens_reaches_it(relayed, monkeypatch):
    # Debian 12's Python 3.11.2 reads a connection that connection_made paused, so sandboxd's
    # greeting was read before the kernel's socket existed, and lost: the kernel never answered.
    from asyncio import selector_events

    monkeypatch.setattr(selector_events._SelectorTransport, "_add_reader", _add_reader_as_before_3_11_3)
    context, relay, kernel_prefix = relayed
    sandboxd = context.socket(zmq.DEALER)
    sandboxd.connect(f"ipc://{relay.prefix}-1")
    await sandboxd.send_multipart([b"kernel_info_request"])
    await asyncio.sleep(0.3)  # the relay reads sandboxd's greeting while the kernel has no socket
    kernel = context.socket(zmq.ROUTER)
    kernel.bind(f"ipc://{kernel_prefix}-1")
    assert (await received(kernel))[1:] == [b"kernel_info_request"]
