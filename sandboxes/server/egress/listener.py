"""A listening socket inside a kernel's namespace, served by sandboxd: each accepted connection
handled in a task of its own, all of them ended with the listener."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)
Handler = Callable[[socket.socket, "Listener"], Awaitable[None]]
ACCEPT_BACKOFF_SECONDS = 0.1


class Listener:
    def __init__(self, sock: socket.socket, handle: Handler) -> None:
        sock.setblocking(False)
        self.sock = sock
        self.handle = handle
        self.connections: dict[asyncio.Task[None], tuple[str, int] | None] = {}  # → its destination
        self._accepting = asyncio.create_task(self._accept_forever())

    async def _accept_forever(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                conn, _ = await loop.sock_accept(self.sock)
            except OSError as exc:  # out of descriptors, say: the sandbox waits, we go on
                log.warning("egress: accept failed: %s", exc)
                await asyncio.sleep(ACCEPT_BACKOFF_SECONDS)
                continue
            conn.setblocking(False)
            task = asyncio.create_task(self._serve(conn))
            self.connections[task] = None
            task.add_done_callback(self.connections.pop)

    async def _serve(self, conn: socket.socket) -> None:
        try:
            await self.handle(conn, self)
        except Exception:
            log.exception("egress: a connection failed")
        finally:
            conn.close()

    def heading_to(self, host: str, port: int) -> None:
        """The running connection's destination, once admitted (drop() may end it later)."""
        task = asyncio.current_task()
        if task in self.connections:
            self.connections[task] = (host, port)  # type: ignore[index]

    def drop(self, still_admitted: Callable[[str, int], bool]) -> None:
        """End the connections whose destination is no longer admitted."""
        for task, destination in list(self.connections.items()):
            if destination is not None and not still_admitted(*destination):
                task.cancel()

    async def close(self) -> None:
        self._accepting.cancel()
        tasks = list(self.connections)
        for task in tasks:
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(self._accepting, *tasks, return_exceptions=True)
        self.sock.close()
