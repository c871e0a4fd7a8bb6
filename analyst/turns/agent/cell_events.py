"""What one cell may store in the event log: its output up to a byte budget, then one notice."""

from __future__ import annotations

import json
from typing import Any

OUTPUT_TYPES = ("stdout", "stderr", "result", "error")
# An error past the budget is still stored (the cell failed, and says why), its texts cut to this.
ERROR_TEXT_KEPT = 8 << 10

Emitted = list[tuple[str, dict[str, Any]]]


def payload_bytes(payload: dict[str, Any]) -> int:
    return len(json.dumps(payload, ensure_ascii=False).encode(errors="surrogatepass"))


class CellEventBudget:
    """Admits a cell's output events until ``limit`` bytes of payload are stored; then one stderr
    notice, and nothing more but a shortened error. Every page load replays what is stored."""

    def __init__(self, limit: int, *, tag: dict[str, Any]) -> None:
        self.limit = limit
        self.tag = tag  # what every event of this cell carries (its tool_call_id)
        self.used = 0
        self.spent = False

    def admit(self, type: str, payload: dict[str, Any]) -> Emitted:
        """The events to store for this one: itself, a cut-down copy and the notice, or none."""
        if type not in OUTPUT_TYPES:
            return [(type, payload)]
        size = payload_bytes(payload)
        if not self.spent and self.used + size <= self.limit:
            self.used += size
            return [(type, payload)]
        if type == "error":
            return self._notice() + [(type, self._shortened(payload))]
        if type in ("stdout", "stderr") and not self.spent:
            head = self._head(payload["text"], self.limit - self.used)
            self.used = self.limit
            return ([(type, {**payload, "text": head})] if head else []) + self._notice()
        return self._notice()

    def _notice(self) -> Emitted:
        if self.spent:
            return []
        self.spent = True
        text = (
            f"\n[output not kept: this cell's output passed {self.limit} bytes; the rest of it is not"
            " stored or shown (the model still read its share)]\n"
        )
        return [("stderr", {"text": text, **self.tag})]

    @staticmethod
    def _head(text: str, room: int) -> str:
        """As much of ``text`` as fits ``room`` bytes once JSON-encoded (roughly: by UTF-8 bytes)."""
        return text.encode(errors="surrogatepass")[: max(room - 64, 0)].decode(errors="ignore")

    @staticmethod
    def _shortened(payload: dict[str, Any]) -> dict[str, Any]:
        shortened = dict(payload)
        for field in ("value", "traceback"):
            text = payload.get(field)
            if isinstance(text, str) and len(text) > ERROR_TEXT_KEPT:
                shortened[field] = text[:ERROR_TEXT_KEPT] + f"\n[cut: {len(text)} characters in all]"
        return shortened
