"""A turn's events as an MCP tool result: text for what was printed and shown, PNG image content
for charts, the traceback as a tool error; and the same facts as structured content."""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from typing import Any

from mcp.types import CallToolResult, ImageContent, TextContent
from pydantic import BaseModel

from analyst.mcp import calls
from analyst.trust import citations

TEXT_LIMIT = 100_000  # characters of one result's text; the session's page keeps it whole
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class CellError(BaseModel):
    name: str
    value: str
    traceback: str


class CellOutput(BaseModel):
    stdout: str
    stderr: str
    result: str | None  # the main result's text (the cell's last expression)
    displays: list[str]  # the text of what the cell displayed, besides the main result
    images: int  # charts, each also given as PNG image content
    error: CellError | None
    url: str


class AnswerOutput(BaseModel):
    answer: str
    messages: list[str]
    cells: list[str]  # the code the model ran, in order
    images: int
    url: str


@dataclass
class Outcome:
    """What a turn's events said, with its charts' PNG bytes."""

    stdout: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    result: str | None = None
    displays: list[str] = field(default_factory=list)
    pngs: list[bytes] = field(default_factory=list)
    error: CellError | None = None
    problems: list[str] = field(default_factory=list)  # the turn's own failures, not the code's
    messages: list[str] = field(default_factory=list)
    cells: list[str] = field(default_factory=list)


def outcome(session_id: object, events: list[dict[str, Any]]) -> Outcome:
    """Read the events; runs off the loop (a chart is read from storage)."""
    seen = Outcome()
    for event in events:
        kind, payload = event["type"], event["payload"]
        if kind in ("stdout", "stderr"):
            getattr(seen, kind).append(str(payload.get("text", "")))
        elif kind == "result":
            _add_result(seen, session_id, payload)
        elif kind == "error" and "traceback" in payload:
            traceback = payload.get("traceback") or ""
            if isinstance(traceback, list):
                traceback = "\n".join(map(str, traceback))
            name, value = str(payload.get("name", "")), str(payload.get("value", ""))
            seen.error = CellError(
                name=name, value=value, traceback=ANSI.sub("", traceback) or f"{name}: {value}"
            )
        elif kind == "error":
            seen.problems.append(str(payload.get("message") or payload.get("code") or "an error"))
        elif kind == "turn_failed":
            seen.problems.append(f"The turn failed: {payload.get('reason') or 'no reason given'}.")
        elif kind == "turn_cancelled":
            seen.problems.append("The turn was stopped before it finished.")
        elif kind == "assistant_message":
            # As the exports show it: untraced figures marked, markers gone.
            seen.messages.append(citations.marked(str(payload.get("text", "")), payload.get("citations")))
        elif kind == "tool_call":
            seen.cells.append(str(payload.get("code", "")))
    return seen


def _add_result(seen: Outcome, session_id: object, payload: dict[str, Any]) -> None:
    data, stored = payload.get("data") or {}, payload.get("artifacts") or {}
    if "image/png" in stored:
        png = calls.artifact_bytes(str(session_id), str(stored["image/png"].get("id")))
        if png is not None:
            seen.pngs.append(png)
            return
    text = data.get("text/plain")
    if text is None and "text/plain" in stored:
        raw = calls.artifact_bytes(str(session_id), str(stored["text/plain"].get("id")))
        text = raw.decode("utf-8", "replace") if raw is not None else None
    if text is None:
        return
    if payload.get("is_main_result"):
        seen.result = str(text)
    else:
        seen.displays.append(str(text))


class RunCell(BaseModel):
    index: int | None  # its place in the analysis; None for the cells that set the parameters
    code: str
    failed: bool | None


class RunOutput(BaseModel):
    run_id: str
    status: str  # done or failed
    parameters: dict[str, Any]
    cells: list[RunCell]
    stdout: str
    images: int
    url: str


def run_result(seen: Outcome, run: dict[str, Any], url: str) -> CallToolResult:
    """A run's outcome: what its cells printed and drew, and each cell's outcome."""
    stdout = cut("".join(seen.stdout))
    structured = RunOutput(
        run_id=run["id"],
        status=run["status"],
        parameters=run["parameters"],
        cells=[RunCell(**cell) for cell in run["cells"]],
        stdout=stdout,
        images=len(seen.pngs),
        url=url,
    )
    failed = run["status"] != "done"
    head = f"The run {'failed' if failed else 'is done'} ({url})."
    why = [cut(seen.error.traceback)] if seen.error is not None else []
    text = "\n\n".join(p for p in [head, stdout, *why, *seen.problems] if p)
    return CallToolResult(
        content=[TextContent(type="text", text=text), *images(seen)],
        structured_content=structured.model_dump(mode="json"),
        is_error=failed,
    )


def cut(text: str) -> str:
    if len(text) <= TEXT_LIMIT:
        return text
    hidden = len(text) - TEXT_LIMIT
    return text[:TEXT_LIMIT] + f"\n[... {hidden:,} more characters; the session's page shows them all]"


def images(seen: Outcome) -> list[ImageContent]:
    return [
        ImageContent(type="image", data=base64.b64encode(p).decode(), mime_type="image/png")
        for p in seen.pngs
    ]


def cell_result(seen: Outcome, url: str) -> CallToolResult:
    stdout, stderr = cut("".join(seen.stdout)), cut("".join(seen.stderr))
    pieces = [stdout, stderr, *map(cut, seen.displays), cut(seen.result or "")]
    text = "\n".join(p.rstrip("\n") for p in pieces if p)
    if seen.error is not None or seen.problems:
        why = cut(seen.error.traceback) if seen.error is not None else "\n".join(seen.problems)
        text = f"{text}\n\n{why}" if text else why
        return CallToolResult(content=[TextContent(type="text", text=text), *images(seen)], is_error=True)
    structured = CellOutput(
        stdout=stdout,
        stderr=stderr,
        result=cut(seen.result) if seen.result is not None else None,
        displays=[cut(d) for d in seen.displays],
        images=len(seen.pngs),
        error=None,
        url=url,
    )
    text = text or "(the cell ran and printed nothing)"
    return CallToolResult(
        content=[TextContent(type="text", text=text), *images(seen)],
        structured_content=structured.model_dump(mode="json"),
    )


def answer_result(seen: Outcome, url: str) -> CallToolResult:
    answer = seen.messages[-1] if seen.messages else ""
    if seen.problems and not answer:
        return CallToolResult(
            content=[TextContent(type="text", text="\n".join(seen.problems))], is_error=True
        )
    text = "\n\n".join([answer or "(the analyst gave no answer)", *seen.problems])
    structured = AnswerOutput(
        answer=answer, messages=seen.messages, cells=seen.cells, images=len(seen.pngs), url=url
    )
    return CallToolResult(
        content=[TextContent(type="text", text=text), *images(seen)],
        structured_content=structured.model_dump(mode="json"),
    )
