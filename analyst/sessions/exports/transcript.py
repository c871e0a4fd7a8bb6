"""A session's event log read as a transcript: prose (questions, answers, notes) and code cells
with their outputs, in order, the form every export writes out."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from django.db.models import Q

from analyst.models import AnalysisSession, Artifact, Event, Turn


@dataclass
class Prose:
    role: Literal["user", "assistant", "note"]
    text: str
    restart: bool = False  # the note of a kernel restart: the cells after it started anew


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


@dataclass
class Code:
    source: str
    by: Literal["model", "user"]
    outputs: list[Output] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(isinstance(output, Failure) for output in self.outputs)


Block = Prose | Code
BINARY = frozenset({"image/png", "image/jpeg"})


def read(session: AnalysisSession, *, stored: bool = True) -> list[Block]:
    """The session's transcript, oldest first; without ``stored``, results hold only their
    inline parts (charts and large outputs are not read back from storage)."""
    blocks: list[Block] = []
    cell: Code | None = None
    noted: set[object] = set()
    for event in _events(session):
        kind, payload = event.type, event.payload
        if kind in ("cell", "tool_call"):
            by = (payload.get("replay") or {}).get("by", "user") if kind == "cell" else "model"
            cell = Code(payload.get("code", ""), "model" if by == "model" else "user")
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
            blocks.append(Prose("user", payload.get("text", "")))
            cell = None
        elif kind == "assistant_message" and payload.get("text"):
            blocks.append(Prose("assistant", payload["text"]))
        elif kind == "file_added" and payload.get("id") not in noted:  # read again: told once
            noted.add(payload.get("id"))
            blocks.append(Prose("note", _file_note(payload)))
        elif kind == "file_removed":
            blocks.append(Prose("note", f"The file `{payload.get('path', '')}` was removed."))
        elif kind == "notice" and payload.get("code") == "kernel_restarted":  # the cells after start anew
            blocks.append(Prose("note", payload.get("text", "The kernel was restarted."), restart=True))
    return blocks


def current_cells(session: AnalysisSession) -> list[Code]:
    """The cells that made the kernel's present state, in order: the model's and the user's
    since its last restart (a replay restarts it too, so its cells are the ones counted after
    it), without those that failed when they ran (their error stopped them; run again they
    would stop a replay where the analysis itself went on, as the script export leaves them
    out)."""
    cells: list[Code] = []
    for block in read(session, stored=False):
        if isinstance(block, Prose) and block.restart:
            cells = []
        elif isinstance(block, Code) and not block.failed:
            cells.append(block)
    return cells


def _events(session: AnalysisSession) -> Iterator[Event]:
    """The log without the answers asked again (Regenerate): their cells were undone in the
    kernel, so the export runs top to bottom as the session now reads. A fork's copies of such
    events name no turn, and say so themselves."""
    superseded = Turn.objects.filter(session=session, regenerations__isnull=False).values("id")
    copied = Q(payload__has_key="superseded") & Q(payload__superseded=True)  # not NULL where absent
    kept = Event.objects.filter(session=session).exclude(turn__in=superseded).exclude(copied)
    return kept.order_by("seq").iterator(chunk_size=500)


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


def _file_note(payload: dict[str, Any]) -> str:
    path = payload.get("path") or payload.get("name") or "a file"
    if payload.get("error"):
        return f"The file `{path}` was uploaded but could not be read: {payload['error']}"
    shape = f" ({payload['rows']:,} rows × {payload['columns']} columns)" if payload.get("rows") else ""
    return f"The file `{path}` was uploaded{shape}."
