"""What a session's cells printed, read from its event log.

A cell's stdout arrives as stream events whose boundaries are the kernel's flushes, not the
lines it printed (ipykernel gathers 0.2 s of output per message, so on a loaded machine one
``print`` can arrive as ``"42"`` then ``"\\n"``): tests compare the text, never the pieces.
"""

from __future__ import annotations

from typing import Any


def printed(log: list[dict[str, Any]]) -> str:
    """Everything the log's cells wrote to stdout, in order."""
    return "".join(e["payload"]["text"] for e in log if e["type"] == "stdout")


def printed_in_last_turn(log: list[dict[str, Any]]) -> str:
    """What the cells of the log's last turn wrote to stdout."""
    last_start = max(i for i, e in enumerate(log) if e["type"] == "turn_started")
    return printed(log[last_start:])
