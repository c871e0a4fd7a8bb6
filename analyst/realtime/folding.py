"""A served page of the event log with the output past the fold left out: each stream event an
output's first lines do not reach carries its line count instead of its text."""

from __future__ import annotations

import json
from typing import Any

STREAMS = frozenset({"stdout", "stderr"})


def fold_outputs(page: list[tuple[str, str, str]], *, lines: int) -> list[tuple[str, str, str]]:
    """``page`` (``events.after_as_json``'s parts) with the text of each stdout or stderr event
    that follows ``lines`` lines of the same output replaced by
    ``folded: {"lines": <its newlines>, "newline": <ends with one>}``.

    An output is what the page draws as one block: consecutive events of one stream for one cell
    (``tool_call_id``, or none for the user's own cell), counted from the page's first event;
    anything else in between starts a new count, so an event is folded only where the page has
    already folded its output (a count that starts late only folds less). The stored events are
    untouched: the whole text stays in the log, for the page's "Show all", exports and the model.
    """
    shown: dict[Any, tuple[str, int]] = {}  # cell → (its stream, lines so far)
    served = []
    for kind, encoded, rest in page:
        if kind not in STREAMS:
            shown.clear()
            served.append((kind, encoded, rest))
            continue
        payload = json.loads(encoded)
        text = payload.get("text") or ""
        cell = payload.get("tool_call_id")
        stream, before = shown.get(cell, (kind, 0))
        if stream != kind:
            before = 0
        count = text.count("\n")
        shown[cell] = (kind, before + count)
        if before >= lines and text:
            folded = {"lines": count, "newline": text.endswith("\n")}
            served.append((kind, json.dumps({**payload, "text": "", "folded": folded}), rest))
        else:
            served.append((kind, encoded, rest))
    return served
