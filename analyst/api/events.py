"""The event log over HTTP: events after a seq as JSON, or live as server-sent events."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.http import FileResponse, HttpRequest, HttpResponse, StreamingHttpResponse
from django.views.decorators.http import require_GET

from analyst.api.auth import ApiError, api_view
from analyst.models import Artifact
from analyst.realtime import events, naming
from analyst.realtime.folding import fold_outputs
from analyst.sessions import sessions

log = logging.getLogger(__name__)

PAGE = 1000  # events a request returns unless it asks for fewer or more (?limit=)
MAX_PAGE = 5000  # the page loads a long session in one request


@api_view
@require_GET
def session_events(request: HttpRequest, session_id: str) -> HttpResponse:
    return events_response(request, sessions.get_for(request.user, session_id).id)


def events_response(
    request: HttpRequest, session_id: object, *, link_group: str | None = None
) -> HttpResponse:
    """The session's events after ?after=, as JSON (at most ?limit=, and whether there are
    ``more``; with ?fold=N, an output's text past its first N lines left out and counted, as the
    page first shows it) or (Accept: text/event-stream) live, whole; a share link's stream
    (``link_group``) ends when the link is revoked."""
    try:
        after = int(request.GET.get("after", "0"))
        limit = int(request.GET.get("limit", str(PAGE)))
    except ValueError:
        raise ApiError(400, "invalid_request", "after and limit must be whole numbers") from None
    if limit < 1:
        raise ApiError(400, "invalid_request", "limit must be at least 1")
    fold = fold_lines(request.GET.get("fold"))
    limit = min(limit, PAGE if link_group else MAX_PAGE)  # a share viewer's pages stay small
    if "text/event-stream" in request.headers.get("Accept", ""):
        stream = live(session_id, after, link_group=link_group)
        response = StreamingHttpResponse(stream, content_type="text/event-stream")
        response["Cache-Control"] = "no-cache"
        response["X-Accel-Buffering"] = "no"
        return response
    page = events.after_as_json(session_id, after, limit + 1)
    served = fold_outputs(page[:limit], lines=fold) if fold else page[:limit]
    if link_group:  # a link's reader: not who asked or ran each (analyst.realtime.naming)
        served = [(kind, naming.unnamed_json(kind, payload), rest) for kind, payload, rest in served]
    listed = ", ".join(events.as_json(rest, payload) for _, payload, rest in served)
    body = f'{{"events": [{listed}], "more": {json.dumps(len(page) > limit)}}}'
    return HttpResponse(body, content_type="application/json")


def fold_lines(value: str | None) -> int | None:
    """?fold=: the lines of an output a page shows before the rest is left out (none: all)."""
    if value is None:
        return None
    try:
        lines = int(value)
    except ValueError:
        lines = 0
    if lines < 1:
        raise ApiError(400, "invalid_request", "fold must be a whole number of lines, at least 1")
    return lines


async def live(session_id: object, after: int, *, link_group: str | None = None) -> AsyncIterator[bytes]:
    """Stored events after ``after``, then new ones as they are broadcast; never a gap or a repeat.
    A link's reader (``link_group``) reads them without who asked or ran each."""

    def shown(event: dict[str, Any]) -> dict[str, Any]:
        return naming.unnamed(event) if link_group else event

    layer = get_channel_layer()
    channel = await layer.new_channel()
    groups = [events.group_name(session_id), *([link_group] if link_group else [])]
    last, replay = after, True
    try:
        for group in groups:  # before the replay, so nothing falls between
            await layer.group_add(group, channel)
        while True:
            while replay:  # in batches, until the log has nothing newer
                batch = await sync_to_async(events.after)(session_id, last)
                for event in batch:
                    last = event["seq"]
                    yield sse(shown(event))
                replay = bool(batch)
            try:
                message = await asyncio.wait_for(layer.receive(channel), settings.ANALYST_HEARTBEAT_INTERVAL)
            except TimeoutError:
                yield b": keep-alive\n\n"
                # Quiet, or deaf: a Redis restart empties the groups. Join again, and ask the log.
                for group in groups:
                    await layer.group_add(group, channel)
                replay = True
                continue
            if message["type"] == "share.revoked":
                return
            event = message["event"]
            if event["seq"] == last + 1:
                last = event["seq"]
                yield sse(shown(event))
            elif event["seq"] > last + 1:  # missed one: the stored log fills the gap
                replay = True
    except Exception:  # raised, the response would hang open and silent: end it, the client resumes
        log.warning("live stream of session %s ended: the channel layer failed", session_id, exc_info=True)
    finally:
        for group in groups:
            with contextlib.suppress(Exception):  # a layer that is down forgets the channel by itself
                async with asyncio.timeout(settings.ANALYST_HEARTBEAT_INTERVAL):
                    await layer.group_discard(group, channel)


def sse(event: dict[str, Any]) -> bytes:
    return f"id: {event['seq']}\nevent: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


@api_view
@require_GET
def artifact(request: HttpRequest, artifact_id: str) -> FileResponse:
    found = Artifact.objects.filter(id=artifact_id).first()
    if found is not None and not sessions.may_read(request.user, found.session_id):
        found = None  # another workspace's: as if it did not exist
    return artifact_response(found)


def artifact_response(found: Artifact | None) -> FileResponse:
    if found is None:
        raise ApiError(404, "not_found", "no such artifact")
    response = FileResponse(found.file.open("rb"), content_type=found.mime_type)
    response["Content-Security-Policy"] = "sandbox; default-src 'none'"
    response["X-Content-Type-Options"] = "nosniff"
    return response
