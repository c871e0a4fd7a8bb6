"""Server-sent events (the WHATWG event-stream format) read from a streaming httpx response."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from analyst.agent.providers.errors import MalformedStream


@dataclass(frozen=True, slots=True)
class ServerSentEvent:
    event: str  # "message" unless the stream named it
    data: str
    id: str | None = None

    def json(self) -> Any:
        """The data decoded as JSON; raises MalformedStream if it is not JSON."""
        try:
            return json.loads(self.data)
        except ValueError as exc:
            excerpt = self.data[:200]
            raise MalformedStream(f"{self.event} event data is not JSON ({exc}): {excerpt!r}") from exc


def iter_events(response: httpx.Response) -> Iterator[ServerSentEvent]:
    """The events of a streaming response; raises MalformedStream if it is not an event stream."""
    content_type = response.headers.get("content-type", "")
    if not content_type.lower().startswith("text/event-stream"):
        excerpt = response.read()[:200]
        got = content_type or "no content type"
        raise MalformedStream(f"expected a text/event-stream answer, got {got}: {excerpt!r}")
    yield from parse_lines(response.iter_lines())


def parse_lines(lines: Iterable[str]) -> Iterator[ServerSentEvent]:
    """Events from lines without their terminators (httpx splits on CRLF, LF and CR alike).

    A blank line dispatches the event; data lines are joined with newlines; lines starting with
    ":" are comments; unknown fields and ``retry`` are ignored. Per the spec, an event with no data
    is not dispatched, and an event the stream ends in the middle of is dropped.
    """
    event, data, last_id = "", [], None
    for line in lines:
        if not line:
            if data:
                yield ServerSentEvent(event or "message", "\n".join(data), last_id)
            event, data = "", []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
        elif name == "id" and "\0" not in value:
            last_id = value
