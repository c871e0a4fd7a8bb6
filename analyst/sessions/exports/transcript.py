"""A session's event log read as a transcript: prose (questions, answers, notes) and code cells
with their outputs, in order, the form every export writes out."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from django.db.models import BooleanField, ExpressionWrapper, Q

from analyst.models import AnalysisSession, Artifact, Event, Turn
from analyst.trust import citations


@dataclass
class Prose:
    role: Literal["user", "assistant", "note"]
    text: str
    superseded: bool = False  # a question whose answer was asked again (Regenerate)


@dataclass
class Stream:
    name: Literal["stdout", "stderr"]
    text: str


@dataclass
class Rich:
    """A display: MIME type → its value (text, base64 for PNG/JPEG, parsed JSON for JSON types)."""

    data: dict[str, Any]
    main: bool


@dataclass
class Failure:
    name: str
    value: str
    traceback: str


Output = Stream | Rich | Failure


@dataclass(frozen=True)
class ReplayMark:
    """A cell run again by a replay: the ``index``-th of its ``of`` cells."""

    index: int
    of: int


@dataclass
class Code:
    source: str
    by: Literal["model", "user"]
    outputs: list[Output] = field(default_factory=list)
    replay: ReplayMark | None = None

    @property
    def failed(self) -> bool:
        return any(isinstance(output, Failure) for output in self.outputs)

    @property
    def interrupted(self) -> bool:
        """Ended by Interrupt or Stop, not by its own error."""
        return any(isinstance(output, Failure) and output.name in INTERRUPTED for output in self.outputs)


Block = Prose | Code
BINARY = frozenset({"image/png", "image/jpeg"})
INTERRUPTED = frozenset({"KeyboardInterrupt", "KernelRestarted"})  # the error of a cell stopped


def read(session: AnalysisSession, *, stored: bool = True, superseded: bool = False) -> list[Block]:
    """The session's transcript, oldest first; without ``stored``, results hold only their
    inline parts (charts and large outputs are not read back from storage). With ``superseded``
    it holds the answers asked again too, each after its question marked ``superseded``."""
    blocks: list[Block] = []
    cell: Code | None = None
    noted: set[object] = set()
    for event, old in _events(session, superseded=superseded):
        kind, payload = event.type, event.payload
        if kind in ("cell", "tool_call"):
            mark = payload.get("replay") or {} if kind == "cell" else {}
            by = mark.get("by", "user") if kind == "cell" else "model"
            cell = Code(payload.get("code", ""), "model" if by == "model" else "user", replay=_mark(mark))
            blocks.append(cell)
        elif kind in ("stdout", "stderr") and cell is not None:
            _add_stream(cell, kind, payload.get("text", ""))
        elif kind == "result" and cell is not None:
            data = _bundle(session, payload) if stored else dict(payload.get("data") or {})
            cell.outputs.append(Rich(data, bool(payload.get("is_main_result"))))
        elif kind == "error" and "name" in payload and cell is not None:
            failure = Failure(payload["name"], payload.get("value", ""), payload.get("traceback", ""))
            cell.outputs.append(failure)
        elif kind == "user_message":
            blocks.append(Prose("user", payload.get("text", ""), superseded=old))
            cell = None
        elif kind == "assistant_message" and payload.get("text"):
            blocks.append(Prose("assistant", citations.marked(payload["text"], payload.get("citations"))))
        elif kind == "file_added" and payload.get("id") not in noted:  # read again: told once
            noted.add(payload.get("id"))
            blocks.append(Prose("note", _file_note(payload)))
        elif kind == "file_removed":
            blocks.append(Prose("note", f"The file `{payload.get('path', '')}` was removed."))
        elif kind == "notice" and payload.get("code") == "kernel_restarted":
            blocks.append(Prose("note", payload.get("text", "The kernel was restarted.")))
    return blocks


def analysis_cells(session: AnalysisSession) -> list[Code]:
    """The session's analysis, what Restart and run all runs: every cell that succeeded, in order,
    from the session's start or from its last replay.

    A restart does not end the analysis (running it again after one is the point). A replay
    runs the analysis again, so from its first cell on the analysis is that replay's cells: each
    it ran stands for the cell it copies (dropped if it failed this time), and those it did not
    reach or that were stopped (it stopped at an error, Stop or Interrupt ended it, its worker
    died) stay as they were. Cells
    that failed when they ran are left out: their error stopped them, and run again they would
    stop a replay where the analysis itself went on (the script export leaves them out too)."""
    cells: list[Code | None] = []  # None: a cell that failed when a replay ran it again
    plan = 0  # the latest replay's count of cells, when they copy the first ones of ``cells``
    for block in read(session, stored=False):
        if not isinstance(block, Code):
            continue
        mark = block.replay
        if mark is not None and mark.index == 1:  # a replay begins
            cells = [cell for cell in cells if cell is not None]
            # Its plan was the analysis as it then stood (for a replay from before this rule, its
            # last cells); a replay on another file, in a new session, copies no cell of it.
            fits = len(cells) >= mark.of and cells[len(cells) - mark.of].source == block.source
            plan = mark.of if fits else 0
            cells = cells[len(cells) - plan :] if plan else cells
        copied = cells[mark.index - 1] if mark is not None and mark.of == plan else None
        if mark is not None and copied is not None and copied.source == block.source:
            if not block.interrupted:
                cells[mark.index - 1] = None if block.failed else block
        elif not block.failed:
            cells.append(block)
    return [cell for cell in cells if cell is not None]


def _events(session: AnalysisSession, *, superseded: bool) -> Iterator[tuple[Event, bool]]:
    """The log, each event with whether it is of an answer asked again (Regenerate); without
    ``superseded``, those are left out: their cells were undone in the kernel, so the export runs
    top to bottom as the session now reads. A fork's copies of such events name no turn, and say
    so themselves."""
    old_turns = Turn.objects.filter(session=session, regenerations__isnull=False).values("id")
    copied = Q(payload__has_key="superseded") & Q(payload__superseded=True)  # not NULL where absent
    logged = Event.objects.filter(session=session)
    if not superseded:
        logged = logged.exclude(turn__in=old_turns).exclude(copied)
    old = ExpressionWrapper(Q(turn__in=old_turns) | copied, output_field=BooleanField())
    marked = logged.annotate(old=old)
    for event in marked.order_by("seq").iterator(chunk_size=500):
        yield event, bool(event.old)


def _add_stream(cell: Code, name: Literal["stdout", "stderr"], text: str) -> None:
    """Consecutive pieces of one stream are one output, as a notebook shows them."""
    last = cell.outputs[-1] if cell.outputs else None
    if isinstance(last, Stream) and last.name == name:
        last.text += text
    else:
        cell.outputs.append(Stream(name, text))


def _bundle(session: AnalysisSession, payload: dict[str, Any]) -> dict[str, Any]:
    """The result's MIME bundle whole: its inline parts, and its stored ones read back."""
    data = dict(payload.get("data") or {})
    for mime, ref in (payload.get("artifacts") or {}).items():
        artifact = Artifact.objects.filter(id=ref.get("id"), session=session).first()
        if artifact is None:
            continue
        with artifact.file.open("rb") as stored:
            content = stored.read()
        if mime in BINARY:
            data[mime] = base64.b64encode(content).decode()
        elif mime.endswith("json"):
            data[mime] = json.loads(content)
        else:
            data[mime] = content.decode(errors="replace")
    return data


def _mark(payload: dict[str, Any]) -> ReplayMark | None:
    index, of = payload.get("index"), payload.get("of")
    if isinstance(index, int) and isinstance(of, int) and 0 < index <= of:
        return ReplayMark(index, of)
    return None


def _file_note(payload: dict[str, Any]) -> str:
    path = payload.get("path") or payload.get("name") or "a file"
    if payload.get("error"):
        return f"The file `{path}` was uploaded but could not be read: {payload['error']}"
    shape = f" ({payload['rows']:,} rows × {payload['columns']} columns)" if payload.get("rows") else ""
    return f"The file `{path}` was uploaded{shape}."
