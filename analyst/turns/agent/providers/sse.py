"""Server-sent events (the WHATWG event-stream format) read from a streaming httpx response."""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from analyst.turns.agent.providers.errors import MalformedStream

# The only line ends of the event-stream format. Not str.splitlines() nor httpx's iter_lines(),
# which also break at U+2028, U+2029, U+0085 and others that the APIs send raw inside JSON.
LINE_END = re.compile(r"\r\n|\r|\n")


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
    yield from parse_lines(split_lines(decode(response.iter_bytes())))


def decode(chunks: Iterable[bytes]) -> Iterator[str]:
    """The stream as text: always UTF-8 (the format allows nothing else), a leading BOM dropped,
    characters split across chunks joined."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    first = True
    for chunk in chunks:
        text = decoder.decode(chunk)
        if first and text:
            text, first = text.removeprefix("\ufeff"), False
        yield text
    yield decoder.decode(b"", final=True)


def split_lines(texts: Iterable[str]) -> Iterator[str]:
    """Lines without their ends, which are CRLF, LF or CR only; a last line without one is kept."""
    pending = ""
    for text in texts:
        pending += text
        start = 0
        for end in LINE_END.finditer(pending):
            if end.group() == "\r" and end.end() == len(pending):
                break  # perhaps the first half of a CRLF: wait for the next text
            yield pending[start : end.start()]
            start = end.end()
        pending = pending[start:]
    if pending:
        yield pending.removesuffix("\r")


def parse_lines(lines: Iterable[str]) -> Iterator[ServerSentEvent]:
    """Events from lines without their terminators.

    A blank line dispatches the event; data lines are joined with newlines; lines starting with
    ":" are comments; unknown fields and ``retry`` are ignored. An event with no data is not
    dispatched. An event the stream ends in is dispatched although its blank line never came
    (the spec drops it, but servers and proxies that forget the last blank line are common, and
    dropping it would lose the answer's end).
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
    if data:
        yield ServerSentEvent(event or "message", "\n".join(data), last_id)
