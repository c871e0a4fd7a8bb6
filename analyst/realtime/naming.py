"""A question's or a cell's event names the member who asked or ran it (``by``), for the
session's workspace to read ("asked by eve"). Those outside it, a share link's readers and a fork
made through a link, read the same events without the name."""

from __future__ import annotations

import json
from typing import Any

NAMING = frozenset({"user_message", "cell"})  # the types whose payload may hold ``by``


def unnamed_payload(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    if kind in NAMING and "by" in payload:
        return {key: value for key, value in payload.items() if key != "by"}
    return payload


def unnamed(message: dict[str, Any]) -> dict[str, Any]:
    """An event (as ``events.as_dict`` makes it) without the name; any other message as it is."""
    payload = message.get("payload")
    if message.get("type") in NAMING and isinstance(payload, dict) and "by" in payload:
        return {**message, "payload": unnamed_payload(message["type"], payload)}
    return message


def unnamed_json(kind: str, payload: str) -> str:
    """A payload as stored JSON text (``events.after_as_json``'s part) without the name."""
    if kind not in NAMING:
        return payload
    decoded = json.loads(payload)
    return json.dumps(unnamed_payload(kind, decoded)) if "by" in decoded else payload
