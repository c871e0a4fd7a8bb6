"""Translate Jupyter iopub messages into the NDJSON events sandboxd streams.

A kernel signs its messages with the key we gave it, so it can send any JSON at all: nothing
here assumes a message has the shape the protocol promises.
"""

from __future__ import annotations

import re
from typing import Any

ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
STREAMS = ("stdout", "stderr")

Event = dict[str, Any]


class MalformedMessage(ValueError):
    """A kernel message whose content does not have the shape its type promises."""


def _field(msg: object, name: str) -> dict[str, Any]:
    value = msg.get(name) if isinstance(msg, dict) else None
    return value if isinstance(value, dict) else {}


def parent_id(msg: object) -> object:
    """The msg_id a message answers, or None."""
    return _field(msg, "parent_header").get("msg_id")


def msg_type(msg: object) -> object:
    return _field(msg, "header").get("msg_type")


def execution_count(reply: object) -> int | None:
    count = _field(reply, "content").get("execution_count")
    return count if isinstance(count, int) and not isinstance(count, bool) else None


def to_event(msg: dict[str, Any]) -> Event | None:
    """One iopub message as an event, or None for messages clients never see. A message of a
    kind clients see but of the wrong shape becomes an error event saying so."""
    try:
        return _to_event(msg_type(msg), _field(msg, "content"))
    except MalformedMessage as exc:
        return error_event("MalformedMessage", f"the kernel sent a malformed message: {exc}", [])


def _to_event(kind: object, content: dict[str, Any]) -> Event | None:
    if kind == "stream":
        name, text = content.get("name"), content.get("text")
        if name not in STREAMS or not isinstance(text, str):
            raise MalformedMessage("a stream message needs a name (stdout or stderr) and a text")
        return {"type": name, "text": text}
    if kind in ("execute_result", "display_data"):
        data = content.get("data", {})
        if not isinstance(data, dict) or not all(isinstance(mime, str) for mime in data):
            raise MalformedMessage(f"a {kind} message's data must be an object keyed by MIME type")
        return {"type": "result", "data": data, "is_main_result": kind == "execute_result"}
    if kind == "error":
        name, value, traceback = content.get("ename"), content.get("evalue"), content.get("traceback")
        if not isinstance(name, str) or not isinstance(value, str):
            raise MalformedMessage("an error message needs an ename and an evalue, both strings")
        if not isinstance(traceback, list) or not all(isinstance(line, str) for line in traceback):
            raise MalformedMessage("an error message's traceback must be a list of strings")
        return error_event(name, value, traceback)
    return None


def error_event(name: str, value: str, traceback: list[str] | str) -> Event:
    if isinstance(traceback, list):
        traceback = "\n".join(traceback)
    return {"type": "error", "name": name, "value": value, "traceback": ANSI_ESCAPE.sub("", traceback)}


def is_idle(msg: dict[str, Any]) -> bool:
    return msg_type(msg) == "status" and _field(msg, "content").get("execution_state") == "idle"
