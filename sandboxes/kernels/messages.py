"""Translate Jupyter iopub messages into the NDJSON events sandboxd streams."""

from __future__ import annotations

import re
from typing import Any

ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

Event = dict[str, Any]


def to_event(msg: dict[str, Any]) -> Event | None:
    """One iopub message as an event, or None for messages clients never see."""
    kind = msg["header"]["msg_type"]
    content = msg["content"]
    if kind == "stream":
        return {"type": content["name"], "text": content["text"]}
    if kind in ("execute_result", "display_data"):
        return {
            "type": "result",
            "data": content.get("data", {}),
            "is_main_result": kind == "execute_result",
        }
    if kind == "error":
        return error_event(content["ename"], content["evalue"], content["traceback"])
    return None


def error_event(name: str, value: str, traceback: list[str] | str) -> Event:
    if isinstance(traceback, list):
        traceback = "\n".join(traceback)
    return {"type": "error", "name": name, "value": value, "traceback": ANSI_ESCAPE.sub("", traceback)}


def is_idle(msg: dict[str, Any]) -> bool:
    return msg["header"]["msg_type"] == "status" and msg["content"]["execution_state"] == "idle"
