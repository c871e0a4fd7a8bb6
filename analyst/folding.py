"""A served page of the event log with the output past the fold left out: each stream event an
output's first lines do not reach carries its line count instead of its text."""

from __future__ import annotations

from typing import Any

STREAMS = frozenset({"stdout", "stderr"})


def fold_outputs(page: list[dict[str, Any]], *, lines: int) -> list[dict[str, Any]]:
    """``page`` with the text of each stdout or stderr event that follows ``lines`` lines of the
    same output replaced by ``folded: {"lines": <its newlines>, "newline": <ends with one>}``.

    An output is what the page draws as one block: consecutive events of one stream for one cell
    (``tool_call_id``, or none for the user's own cell), counted from the page's first event;
    anything else in between starts a new count, so an event is folded only where the page has
    already folded its output (a count that starts late only folds less). The stored events are
    untouched: the whole text stays in the log, for the page's "Show all", exports and the model.
    """
    shown: dict[Any, tuple[str, int]] = {}  # cell → (its stream, lines so far)
    served = []
    for event in page:
        if event["type"] not in STREAMS:
            shown.clear()
            served.append(event)
            continue
        payload = event["payload"]
        text = payload.get("text") or ""
        cell = payload.get("tool_call_id")
        stream, before = shown.get(cell, (event["type"], 0))
        if stream != event["type"]:
            before = 0
        count = text.count("\n")
        shown[cell] = (event["type"], before + count)
        if before >= lines and text:
            folded = {"lines": count, "newline": text.endswith("\n")}
            served.append({**event, "payload": {**payload, "text": "", "folded": folded}})
        else:
            served.append(event)
    return served
