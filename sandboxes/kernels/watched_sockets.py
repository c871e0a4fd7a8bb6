"""A ZeroMQ context for a kernel's client sockets that bounds what they take and notices when
ZeroMQ drops one of their connections (a message over the size limit ends it for good)."""

from __future__ import annotations

from typing import Any

import zmq
import zmq.asyncio

# iopub (SUB) and shell, stdin and control (DEALER); not the heartbeat, which jupyter_client's
# own thread remakes, nor a monitor's own socket.
WATCHED = (zmq.SUB, zmq.DEALER)


class WatchedContext(zmq.asyncio.Context):
    """Every socket made here gets ``max_message_bytes`` and ``queue`` (ZMQ_MAXMSGSIZE, ZMQ_RCVHWM)
    and a monitor, all before it connects: set on a connected socket, an option reaches ZeroMQ's
    I/O thread as a command that raced there (kernel_launcher.py's history), and an event of a
    connection made before its monitor is lost.

    libzmq checks the size limit per frame and counts its queue in whole messages, so these
    sockets are connected to a kernel through kernel_relay.py, which passes on only messages of
    at most ``max_message_bytes`` in all their frames."""

    # pyzmq takes an attribute a subclass does not declare here for a socket option
    _monitors: list[tuple[zmq.asyncio.Socket, zmq.asyncio.Socket]]  # (watched, its monitor)

    def __init__(self, *, max_message_bytes: int, queue: int) -> None:
        super().__init__()
        self.setsockopt(zmq.MAXMSGSIZE, max_message_bytes)
        self.setsockopt(zmq.RCVHWM, queue)
        self._monitors = []

    def socket(self, socket_type: int, *args: Any, **kwargs: Any) -> Any:
        sock = super().socket(socket_type, *args, **kwargs)
        if socket_type in WATCHED:
            address = f"inproc://kernel-socket-monitor-{id(sock)}"
            sock.monitor(address, zmq.EVENT_DISCONNECTED)
            monitor = super().socket(zmq.PAIR)
            monitor.connect(address)
            self._monitors.append((sock, monitor))
        return sock

    async def dropped(self) -> bool:
        """Whether ZeroMQ dropped a connection of an open socket since this was last asked.
        Monitors of closed sockets are closed here."""
        found = False
        watching = []
        for sock, monitor in self._monitors:
            while await monitor.poll(0):
                await monitor.recv_multipart()
                found = found or not sock.closed
            if sock.closed:
                monitor.close(linger=0)
            else:
                watching.append((sock, monitor))
        self._monitors = watching
        return found
