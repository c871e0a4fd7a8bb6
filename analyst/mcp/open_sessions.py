"""Which MCP sessions over HTTP each user holds open in this web process, so that one token cannot
hold them all (each keeps its server task and streams in memory until it ends)."""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from analyst.lib.raw_asgi import header

SESSION_HEADER = b"mcp-session-id"
VERSION_HEADER = b"mcp-protocol-version"

Send = Callable[[dict[str, Any]], Any]


class OpenSessions:
    """The session ids each user opened, kept while ``alive(id)`` says the SDK's session manager
    still serves them (it forgets a session the client deleted or that idled out), plus the
    openings still in flight: a burst of openings is counted before any of them has its id."""

    def __init__(self, alive: Callable[[str], bool]) -> None:
        self.alive = alive
        self.ids: dict[object, set[str]] = {}
        self.opening: Counter[object] = Counter()

    def held(self, user_id: object) -> int:
        live = {session_id for session_id in self.ids.pop(user_id, ()) if self.alive(session_id)}
        if live:
            self.ids[user_id] = live
        return len(live) + self.opening[user_id]

    @contextlib.contextmanager
    def opening_for(self, user_id: object) -> Iterator[None]:
        """While a request that may open a session is served (no await between held() and this,
        so the count and the reservation are one step on the event loop)."""
        self.opening[user_id] += 1
        try:
            yield
        finally:
            self.opening[user_id] -= 1
            if not self.opening[user_id]:
                del self.opening[user_id]

    def noting(self, user_id: object, send: Send) -> Send:
        """``send``, noting the id of the session its response opened, if it opened one."""

        async def note(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                session_id = header(message, SESSION_HEADER)
                if session_id:
                    self.ids.setdefault(user_id, set()).add(session_id)
            await send(message)

        return note


def opens_a_session(scope: dict[str, Any]) -> bool:
    """A request the SDK admits a new session for (kept if it initializes), by the SDK's own rule:
    no session id, and a handshake-era protocol version or none. A request of the 2026 protocol
    stands alone: it opens no session, and holds nothing after its answer."""
    version = header(scope, VERSION_HEADER)
    return not header(scope, SESSION_HEADER) and (not version or version in HANDSHAKE_PROTOCOL_VERSIONS)
