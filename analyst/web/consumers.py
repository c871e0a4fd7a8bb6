"""The session's live event stream over a WebSocket: replay after the client's last seq, then live.

The owner connects to /ws/sessions/<id>/?after=<seq> (the login cookie authenticates), anyone
with a share link to /ws/shared/<token>/?after=<seq>; each receives every event as JSON, and
after a reconnect asks again with the last seq it saw. Neither can send anything but a replay
request.

Group membership lives in the channel layer (Redis), which can lose it (a Redis restart empties
every group) without telling anyone. So every ANALYST_HEARTBEAT_INTERVAL seconds a socket joins
its groups again, sends itself a ping through the layer, replays from the log whatever it missed,
and sends the client ``{"type": "heartbeat", "seq": <last seq sent>, "interval": <seconds>}``
(also once on connect). A ping that has not come back by the next tick, or a layer that fails,
closes the socket with LAYER_LOST, and the client reconnects with ?after=.

A member's socket counts them as present on the session (analyst.collab.presence) while it is
open. Asked with ?collab=1 (the page does), it also carries what is not in the log: who has the
session open (``{"type": "presence", "users": [...]}``, on every arrival and departure, and at a
tick when an entry lapsed), comments as they are made and deleted (``comment``,
``comment_removed``), and the user's unread count (``notifications``); without it a client gets
events and heartbeats only, as before. Each joins its user's group too, where a change to the
user's membership arrives: the socket checks again whether it may still read the session, and
closes with NOT_ALLOWED if not (each tick checks too, should the layer lose that message). A share
link's readers get none of these and are not counted as present.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections import deque
from typing import Any

from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings

from analyst.collab import live, presence
from analyst.models import ShareLink
from analyst.realtime import events, naming
from analyst.sessions import sessions, shares

log = logging.getLogger(__name__)

NOT_ALLOWED = 4404  # the session does not exist or is not yours: no hint which
LAYER_LOST = 4503  # the channel layer stopped reaching this socket: reconnect with ?after=
CATCH_UP = 4409  # a share viewer more than a page behind: read the log over HTTP, then reconnect
TOO_MANY_REPLAYS = 4429  # a share viewer kept asking for replays faster than we answer them

SHARE_REPLAY_PAGE = 200  # events one replay sends a share viewer (the HTTP log's page is 1000)
SHARE_REPLAY_GAP = 1.0  # seconds between a share viewer's replay requests that we answer
SHARE_EXTRA_REPLAYS_PER_MINUTE = 5  # beyond one per heartbeat: a client asks at a gap, too
SHARE_IGNORED_BEFORE_CLOSE = 30  # requests ignored within a minute before we close the socket


class SessionEventsConsumer(AsyncJsonWebsocketConsumer):
    ticker: asyncio.Task[None] | None = None

    async def allowed(self) -> tuple[object, list[str]] | None:
        """The session this connection may read and the groups it listens on, or None."""
        user = self.scope.get("user")
        session_id = self.scope["url_route"]["kwargs"]["session_id"]
        if user is None or not user.is_authenticated or not await _may_read(user, session_id):
            return None
        return session_id, [events.group_name(session_id), live.user_group(user.pk)]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            if self.ticker is not None:
                self.ticker.cancel()

    async def connect(self) -> None:
        found = await self.allowed()
        if found is None:
            await self.close(code=NOT_ALLOWED)
            return
        self.session_id, self.listening = found
        self.last = _after(self.scope)
        self.collab = _query(self.scope).get("collab") == "1"  # the client shows presence and comments
        self.sending = asyncio.Lock()  # one sender at a time: replays, live events, heartbeats
        self.ping: str | None = None  # the token of our ping still on its way through the layer
        await self.join()  # before the replay, so nothing falls between
        await self.accept()
        async with self.sending:
            await self.replay()
            await self.heartbeat()
        await self.arrive()
        self.ticker = asyncio.create_task(self.tick_forever())

    async def disconnect(self, code: int) -> None:
        await self.depart()
        for group in getattr(self, "listening", ()):
            try:
                async with asyncio.timeout(settings.ANALYST_HEARTBEAT_INTERVAL):
                    await self.channel_layer.group_discard(group, self.channel_name)
            except Exception as error:  # the layer is down or hung: the group forgets us by itself
                log.info("could not leave %s: %s", group, error)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        """Clients only ever ask for a replay: {"after": <seq>}."""
        if isinstance(content, dict) and isinstance(content.get("after"), int):
            async with self.sending:
                self.last = content["after"]
                await self.replay()

    async def session_event(self, message: dict[str, Any]) -> None:
        event = message["event"]
        async with self.sending:
            if event["seq"] == self.last + 1:
                self.last = event["seq"]
                await self.send_json(event)
            elif event["seq"] > self.last + 1:  # one went missing on the way: the log has it
                await self.replay()

    async def session_presence(self, message: dict[str, Any]) -> None:
        self.shown_present = message["users"]
        await self.send_collab({"type": "presence", "users": message["users"]})

    async def session_comment(self, message: dict[str, Any]) -> None:
        await self.send_collab({"type": "comment", "comment": message["comment"]})

    async def session_uncomment(self, message: dict[str, Any]) -> None:
        await self.send_collab({"type": "comment_removed", "id": message["id"]})

    async def user_notifications(self, message: dict[str, Any]) -> None:
        await self.send_collab({"type": "notifications", "unread": message["unread"]})

    async def send_collab(self, frame: dict[str, Any]) -> None:
        if self.collab:
            await self.send_json(frame)

    async def user_access(self, message: dict[str, Any]) -> None:
        """The user's membership changed: may they still read this session?"""
        found = await self.allowed()
        if found is None or found[0] != self.session_id:
            await self.depart()  # at once: the pages still open see them go before the socket ends
            await self.close(code=NOT_ALLOWED)

    async def arrive(self) -> None:
        """Count this socket as present, and tell every open page of the session who is."""
        user = self.scope["user"]
        self.presence_entry = presence.entry(self.channel_name, user.pk, user.get_username())
        try:
            async with asyncio.timeout(settings.ANALYST_HEARTBEAT_INTERVAL):
                await _in_thread(presence.do_enter)(self.session_id, self.presence_entry)
                users = await _in_thread(presence.present)(self.session_id)
                await self.channel_layer.group_send(self.listening[0], live.presence_message(users))
        except Exception as error:  # Redis is down: the next tick tries again
            log.info("could not note the arrival on session %s: %r", self.session_id, error)

    async def renew_presence(self) -> None:
        """Renew this socket's entry; show the page who is present if that changed unheard (an
        entry that lapsed: its process was killed, or Redis restarted)."""
        if getattr(self, "presence_entry", None) is None:
            return  # never arrived, or departed already (the socket is ending)
        try:
            async with asyncio.timeout(settings.ANALYST_HEARTBEAT_INTERVAL):
                await _in_thread(presence.do_enter)(self.session_id, self.presence_entry)
                users = await _in_thread(presence.present)(self.session_id)
        except Exception as error:
            log.info("could not renew the presence on session %s: %r", self.session_id, error)
            return
        if users != getattr(self, "shown_present", None):
            await self.session_presence(live.presence_message(users))

    async def depart(self) -> None:
        """No longer present: tell the pages still open."""
        entry = getattr(self, "presence_entry", None)
        if entry is None:
            return
        self.presence_entry = None
        try:
            async with asyncio.timeout(settings.ANALYST_HEARTBEAT_INTERVAL):
                await _in_thread(presence.do_leave)(self.session_id, entry)
                users = await _in_thread(presence.present)(self.session_id)
                await self.channel_layer.group_send(self.listening[0], live.presence_message(users))
        except Exception as error:  # the entry lapses by itself
            log.info("could not note the departure from session %s: %r", self.session_id, error)

    async def layer_ping(self, message: dict[str, Any]) -> None:
        if message.get("token") == self.ping:
            self.ping = None

    async def replay(self) -> None:
        """Send what the log holds after self.last; the caller holds self.sending."""
        while batch := await database_sync_to_async(events.after)(self.session_id, self.last):
            for event in batch:
                self.last = event["seq"]
                await self.send_json(event)

    async def heartbeat(self) -> None:
        interval = settings.ANALYST_HEARTBEAT_INTERVAL
        await self.send_json({"type": "heartbeat", "seq": self.last, "interval": interval})

    async def join(self) -> None:
        """Join our groups (again: group_add is idempotent, and renews the group's expiry)."""
        for group in self.listening:
            await self.channel_layer.group_add(group, self.channel_name)

    async def tick_forever(self) -> None:
        while True:
            await asyncio.sleep(settings.ANALYST_HEARTBEAT_INTERVAL)
            try:
                code = await self.tick()
            except Exception:
                log.exception("live view tick failed for session %s", self.session_id)
                continue
            if code is not None:
                await self.depart()
                await self.close(code=code)
                return

    async def tick(self) -> int | None:
        """Check that we may still listen and that the layer still reaches us; catch up; say so.
        Returns the close code when the socket must end."""
        found = await self.allowed()
        if found is None or found[0] != self.session_id:
            return NOT_ALLOWED
        if self.ping is not None:
            log.warning("the channel layer lost a live view of session %s: closing it", self.session_id)
            return LAYER_LOST
        try:
            async with asyncio.timeout(settings.ANALYST_HEARTBEAT_INTERVAL):
                await self.join()
                self.ping = secrets.token_hex(8)
                await self.channel_layer.send(self.channel_name, {"type": "layer.ping", "token": self.ping})
        except Exception as error:
            log.warning("the channel layer failed a live view of session %s: %r", self.session_id, error)
            return LAYER_LOST
        async with self.sending:
            await self.replay()  # the log is the truth: anything the layer dropped comes from it
            await self.heartbeat()
        await self.renew_presence()
        return None


class SharedEventsConsumer(SessionEventsConsumer):
    """A share link's stream; revoking the link closes it at once (or, if the layer lost the
    revocation, at the next tick).

    Anyone may hold a link, so what one viewer can make us send is bounded: a replay sends at most
    SHARE_REPLAY_PAGE events, and a viewer further behind is closed with CATCH_UP (the client
    then reads the log over HTTP, paged, and reconnects with ?after=); a viewer's own replay
    requests are heard at most once a second and a few times a minute beyond one per heartbeat,
    the rest ignored, and a viewer who keeps asking is closed with TOO_MANY_REPLAYS. Before this
    a 19-byte {"after": 0} sent the whole log, over and over."""

    closing = False
    asked: deque[float]  # when we last heard a replay request, within the last minute
    ignored: deque[float]  # when we ignored one, within the last minute

    async def allowed(self) -> tuple[object, list[str]] | None:
        found = await _shared_link(self.scope["url_route"]["kwargs"]["token"])
        if found is None:
            return None
        link_id, session_id = found
        return session_id, [shares.group_name(link_id), events.group_name(session_id)]

    async def share_revoked(self, message: dict[str, Any]) -> None:
        await self.close(code=NOT_ALLOWED)

    async def send_json(self, content: Any, close: bool = False) -> None:
        """Events without the member who asked or ran them: a link's reader is not one of them."""
        await super().send_json(naming.unnamed(content), close)

    # A link's readers are not counted as present, and see neither who is nor the comments.
    async def arrive(self) -> None:
        pass

    async def renew_presence(self) -> None:
        pass

    async def depart(self) -> None:
        pass

    async def session_presence(self, message: dict[str, Any]) -> None:
        pass

    async def session_comment(self, message: dict[str, Any]) -> None:
        pass

    async def session_uncomment(self, message: dict[str, Any]) -> None:
        pass

    async def connect(self) -> None:
        self.asked, self.ignored = deque(), deque()
        await super().connect()

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if not (isinstance(content, dict) and isinstance(content.get("after"), int)):
            return
        if not self.may_replay(time.monotonic()):
            if len(self.ignored) > SHARE_IGNORED_BEFORE_CLOSE:
                log.info("a share viewer of session %s kept asking for replays: closing", self.session_id)
                await self.close(code=TOO_MANY_REPLAYS)
            return
        await super().receive_json(content, **kwargs)

    def may_replay(self, now: float) -> bool:
        """Whether to answer a replay request now (noting it either way)."""
        for times in (self.asked, self.ignored):
            while times and times[0] <= now - 60:
                times.popleft()
        per_minute = int(60 / max(settings.ANALYST_HEARTBEAT_INTERVAL, 1)) + SHARE_EXTRA_REPLAYS_PER_MINUTE
        if (self.asked and now - self.asked[-1] < SHARE_REPLAY_GAP) or len(self.asked) >= per_minute:
            self.ignored.append(now)
            return False
        self.asked.append(now)
        return True

    async def replay(self) -> None:
        """At most a page of what the log holds after self.last; the caller holds self.sending."""
        batch = await database_sync_to_async(events.after)(self.session_id, self.last, SHARE_REPLAY_PAGE + 1)
        for event in batch[:SHARE_REPLAY_PAGE]:
            self.last = event["seq"]
            await self.send_json(event)
        if len(batch) > SHARE_REPLAY_PAGE:
            await self.close(code=CATCH_UP)

    async def send(
        self, text_data: str | None = None, bytes_data: bytes | None = None, close: bool = False
    ) -> None:
        if not self.closing:  # a replay that closed the socket mid-connect: its heartbeat stays unsent
            await super().send(text_data, bytes_data, close)

    async def close(self, code: int | bool | None = None, reason: str | None = None) -> None:
        if not self.closing:
            self.closing = True
            await super().close(code, reason)


@database_sync_to_async
def _shared_link(token: str) -> tuple[int, object] | None:
    """(link id, session id) of the live link with this token."""
    return ShareLink.objects.filter(token=token, revoked_at=None).values_list("id", "session_id").first()


def _in_thread(function: Any) -> Any:
    """A blocking Redis call, run off the event loop (in a thread of no database connection)."""
    return sync_to_async(function, thread_sensitive=False)


@database_sync_to_async
def _may_read(user: Any, session_id: object) -> bool:
    return sessions.may_read(user, session_id)


def _query(scope: dict[str, Any]) -> dict[str, str]:
    return dict(
        part.split("=", 1) for part in scope.get("query_string", b"").decode().split("&") if "=" in part
    )


def _after(scope: dict[str, Any]) -> int:
    try:
        return max(0, int(_query(scope).get("after", "0")))
    except ValueError:
        return 0
