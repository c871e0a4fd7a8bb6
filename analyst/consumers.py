"""The session's live event stream over a WebSocket: replay after the client's last seq, then live.

The owner connects to /ws/sessions/<id>/?after=<seq> (the login cookie authenticates), anyone
with a share link to /ws/shared/<token>/?after=<seq>; each receives every event as JSON, and
after a reconnect asks again with the last seq it saw. Neither can send anything but a replay
request.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from analyst import events, shares
from analyst.models import AnalysisSession, ShareLink

NOT_ALLOWED = 4404  # the session does not exist or is not yours: no hint which


class SessionEventsConsumer(AsyncJsonWebsocketConsumer):
    async def allowed_session(self) -> object | None:
        """The session this connection may read, or None."""
        user = self.scope.get("user")
        session_id = self.scope["url_route"]["kwargs"]["session_id"]
        if user is None or not user.is_authenticated or not await _owns(user, session_id):
            return None
        return session_id

    async def connect(self) -> None:
        session_id = await self.allowed_session()
        if session_id is None:
            await self.close(code=NOT_ALLOWED)
            return
        self.session_id = session_id
        self.group = events.group_name(session_id)
        self.last = _after(self.scope)
        await self.channel_layer.group_add(self.group, self.channel_name)  # before the replay
        await self.accept()
        await self.replay()

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        """Clients only ever ask for a replay: {"after": <seq>}."""
        if isinstance(content, dict) and isinstance(content.get("after"), int):
            self.last = content["after"]
            await self.replay()

    async def session_event(self, message: dict[str, Any]) -> None:
        event = message["event"]
        if event["seq"] == self.last + 1:
            self.last = event["seq"]
            await self.send_json(event)
        elif event["seq"] > self.last + 1:  # one went missing on the way: the log has it
            await self.replay()

    async def replay(self) -> None:
        while batch := await database_sync_to_async(events.after)(self.session_id, self.last):
            for event in batch:
                self.last = event["seq"]
                await self.send_json(event)


class SharedEventsConsumer(SessionEventsConsumer):
    """A share link's stream; revoking the link closes it at once."""

    async def allowed_session(self) -> object | None:
        found = await _shared_link(self.scope["url_route"]["kwargs"]["token"])
        if found is None:
            return None
        self.link_group = shares.group_name(found[0])
        await self.channel_layer.group_add(self.link_group, self.channel_name)
        return found[1]

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "link_group"):
            await self.channel_layer.group_discard(self.link_group, self.channel_name)
        await super().disconnect(code)

    async def share_revoked(self, message: dict[str, Any]) -> None:
        await self.close(code=NOT_ALLOWED)


@database_sync_to_async
def _shared_link(token: str) -> tuple[int, object] | None:
    """(link id, session id) of the live link with this token."""
    return ShareLink.objects.filter(token=token, revoked_at=None).values_list("id", "session_id").first()


@database_sync_to_async
def _owns(user: Any, session_id: object) -> bool:
    return AnalysisSession.objects.filter(id=session_id, owner=user).exists()


def _after(scope: dict[str, Any]) -> int:
    query = dict(
        part.split("=", 1) for part in scope.get("query_string", b"").decode().split("&") if "=" in part
    )
    try:
        return max(0, int(query.get("after", "0")))
    except ValueError:
        return 0
