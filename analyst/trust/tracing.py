"""An answer's figures traced in its session's outputs, as stored in the event log; and the number
each of the model's cells gets, by which the model cites it (see analyst.trust.citations)."""

from __future__ import annotations

from typing import Any

from analyst.models import AnalysisSession, Event
from analyst.trust.citations import CELL_LABEL, MAX_OUTPUT_CHARS, citations, cited_cells, figures, output_text

OUTPUT_TYPES = ("stdout", "stderr", "result", "error")


def next_cell_number(session: AnalysisSession) -> int:
    """The number of the model's next cell in ``session``: one more than the cells it ran (a
    fork's copied cells count, so a fork goes on numbering where its source was)."""
    return Event.objects.filter(session=session, type="tool_call").count() + 1


def cell_label(number: int) -> str:
    """What the model reads before a cell's output, and cites as ``[[cell N]]``."""
    return CELL_LABEL.format(number=number)


def cite(session: AnalysisSession, answer: str) -> list[dict[str, Any]]:
    """The citations of ``answer`` against every output ``session`` holds so far (the newest
    MAX_OUTPUT_CHARS characters of them)."""
    if not figures(answer):
        return []  # nothing to read the outputs for
    outputs: list[tuple[int, str]] = []
    by_call: dict[str, set[int]] = {}
    read = 0
    rows = Event.objects.filter(session=session, type__in=OUTPUT_TYPES).order_by("-seq")
    for seq, type, stored in rows.values_list("seq", "type", "payload").iterator():
        payload = stored if isinstance(stored, dict) else {}
        text = output_text(type, payload)
        read += len(text)
        if read > MAX_OUTPUT_CHARS:
            break
        outputs.append((seq, text))
        if isinstance(payload.get("tool_call_id"), str):
            by_call.setdefault(payload["tool_call_id"], set()).add(seq)
    return citations(answer, outputs, _cells(session, answer, by_call))


def _cells(session: AnalysisSession, answer: str, by_call: dict[str, set[int]]) -> dict[int, set[int]]:
    """The cited cells' numbers → their outputs' seqs."""
    numbers = {number for _, cited in cited_cells(answer) for number in cited}
    if not numbers:
        return {}
    calls = Event.objects.filter(session=session, type="tool_call", payload__cell__in=sorted(numbers))
    return {
        number: by_call.get(call_id, set())
        for number, call_id in calls.values_list("payload__cell", "payload__id")
        if isinstance(number, int) and isinstance(call_id, str)
    }
