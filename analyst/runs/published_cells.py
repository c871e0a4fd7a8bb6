"""The cells of a published report's version, by their index in the analysis, and what changed in
the figures they printed between two versions.

A run's cells carry their index in its plan (the event's ``replay.index``); the parameters it
injected carry none and are left out. The published session's own cells, shown while no run is
done, are numbered as a run numbers them: the cells that succeeded, in order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from analyst.models import AnalysisSession
from analyst.sessions.exports.transcript import Code, Rich, Stream, read

NUMBER = re.compile(r"(?<![\w.])-?\d+(?:,\d{3})*(?:\.\d+)?(?!\w)")  # 1,234.5 -7 3.14; not x1
TEXT_READ = 100_000  # characters of a cell's printed text looked at for figures
MAX_NUMBERS = 200  # per cell
MAX_CHANGES = 30  # listed on the page


@dataclass(frozen=True)
class Change:
    cell: int
    before: str
    after: str


def indexed(session: AnalysisSession, *, run: bool, stored: bool = False) -> list[tuple[int, Code]]:
    """The version's cells by their index in the analysis, in order."""
    cells = [block for block in read(session, stored=stored) if isinstance(block, Code)]
    if run:
        return [(cell.replay.index, cell) for cell in cells if cell.replay is not None]
    return list(enumerate((cell for cell in cells if not cell.failed), start=1))


def text(cell: Code) -> str:
    """What the cell printed and the plain text of what it showed, in order (stderr aside)."""
    parts: list[str] = []
    for output in cell.outputs:
        if isinstance(output, Stream) and output.name == "stdout":
            parts.append(output.text)
        elif isinstance(output, Rich) and isinstance(output.data.get("text/plain"), str):
            parts.append(output.data["text/plain"] + "\n")
    return "".join(parts)


def figures(printed: str) -> list[str]:
    return NUMBER.findall(printed[:TEXT_READ])[:MAX_NUMBERS]


def changes(before: list[tuple[int, Code]], after: list[tuple[int, Code]]) -> tuple[list[Change], int]:
    """Each figure of a cell that differs between the two versions, matched by the cell's index
    and the figure's place in its text; at most MAX_CHANGES of them, and how many more there were."""
    earlier = {index: figures(text(cell)) for index, cell in before}
    found: list[Change] = []
    for index, cell in after:
        old = earlier.get(index)
        if old is None:
            continue
        for was, now in zip(old, figures(text(cell)), strict=False):
            if _value(was) != _value(now):
                found.append(Change(index, was, now))
    return found[:MAX_CHANGES], max(0, len(found) - MAX_CHANGES)


def _value(figure: str) -> float:
    return float(figure.replace(",", ""))
