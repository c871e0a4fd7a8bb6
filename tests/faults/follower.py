"""A live view's client as the page is: it keeps the seqs and heartbeats it got, and reconnects
with ?after=<last seq> whenever the server closes the socket."""

from __future__ import annotations

import time
from typing import Any

from tests.faults.conftest import HEARTBEAT_SECONDS
from tests.faults.websocket_client import Closed, WebSocket

WAIT = 10 * HEARTBEAT_SECONDS + 5  # bound on every wait for an outcome


class Follower:
    def __init__(self, open_live_view: Any, path: str, user: Any, *, after: int = 0) -> None:
        self.open, self.path, self.user = open_live_view, path, user
        self.seqs: list[int] = []  # every event's seq, across reconnects
        self.heartbeats: list[dict[str, Any]] = []
        self.closes: list[int | None] = []
        self.socket: WebSocket = open_live_view(path, user, after=after)
        self.after = after

    def read_until(self, done: Any) -> None:
        deadline = time.monotonic() + WAIT
        while not done():
            left = deadline - time.monotonic()
            assert left > 0, f"gave up: seqs {self.seqs}, closes {self.closes}"
            try:
                frame = self.socket.receive_json(timeout=left)
            except TimeoutError:
                continue
            except Closed as closed:
                self.closes.append(closed.code)
                if not done():
                    self.reconnect(deadline)
                continue
            if frame["type"] == "heartbeat":
                self.heartbeats.append(frame)
            else:
                self.seqs.append(frame["seq"])

    def reconnect(self, deadline: float | None = None) -> None:
        """Open again with ?after=<last seq>, as the page does (with a pause while refused)."""
        deadline = deadline or time.monotonic() + WAIT
        while True:
            try:
                after = self.seqs[-1] if self.seqs else self.after
                self.socket = self.open(self.path, self.user, after=after)
                return
            except Closed:
                assert time.monotonic() < deadline, f"could not reconnect: closes {self.closes}"
                time.sleep(0.2)

    def read_through(self, seq: int) -> None:
        self.read_until(lambda: self.seqs and self.seqs[-1] >= seq)

    def wait_for_heartbeat(self) -> None:
        seen = len(self.heartbeats)
        self.read_until(lambda: len(self.heartbeats) > seen)

    def wait_for_close(self) -> None:
        """Read until the server closes the socket (and do not reconnect)."""
        seen = len(self.closes)
        self.read_until(lambda: len(self.closes) > seen)
