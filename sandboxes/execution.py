"""What a cell produced: Execution, Result and ExecutionError, and the one parser of its events."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# MIME type → Result attribute, as in E2B's code interpreter.
MIME_FIELDS = {
    "text/plain": "text",
    "text/html": "html",
    "text/markdown": "markdown",
    "image/svg+xml": "svg",
    "image/png": "png",
    "image/jpeg": "jpeg",
    "application/pdf": "pdf",
    "text/latex": "latex",
    "application/json": "json",
    "application/javascript": "javascript",
    "application/vnd.dataresource+json": "data",
    "application/vnd.e2b.chart+json": "chart",
}


@dataclass
class Result:
    """One display_data or execute_result: every MIME type of it, whole in ``bundle``."""

    bundle: dict[str, Any]
    is_main_result: bool = False
    text: str | None = None
    html: str | None = None
    markdown: str | None = None
    svg: str | None = None
    png: str | None = None  # base64
    jpeg: str | None = None  # base64
    pdf: str | None = None
    latex: str | None = None
    json: Any = None
    javascript: str | None = None
    data: Any = None
    chart: Any = None
    extra: dict[str, Any] = field(default_factory=dict)  # any other MIME, e.g. plotly JSON

    @classmethod
    def from_bundle(cls, bundle: dict[str, Any], is_main_result: bool = False) -> Result:
        known: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for mime, value in bundle.items():
            if mime in MIME_FIELDS:
                known[MIME_FIELDS[mime]] = value
            else:
                extra[mime] = value
        return cls(bundle=bundle, is_main_result=is_main_result, extra=extra, **known)

    @property
    def plotly(self) -> dict[str, Any] | None:
        return self.extra.get("application/vnd.plotly.v1+json")

    def formats(self) -> list[str]:
        return list(self.bundle)


@dataclass
class ExecutionError:
    """A cell's exception (or the service's word that the kernel died or timed out)."""

    name: str
    value: str
    traceback: str

    def __str__(self) -> str:
        return f"{self.name}: {self.value}"


@dataclass
class Execution:
    results: list[Result] = field(default_factory=list)
    stdout_parts: list[str] = field(default_factory=list)
    stderr_parts: list[str] = field(default_factory=list)
    error: ExecutionError | None = None
    execution_count: int | None = None

    @property
    def stdout(self) -> str:
        return "".join(self.stdout_parts)

    @property
    def stderr(self) -> str:
        return "".join(self.stderr_parts)

    @property
    def main_result(self) -> Result | None:
        return next((r for r in self.results if r.is_main_result), None)

    @property
    def text(self) -> str | None:
        """text/plain of the last expression's value, or None."""
        main = self.main_result
        return main.text if main else None

    @property
    def png(self) -> str | None:
        return next((r.png for r in self.results if r.png), None)

    @property
    def html(self) -> str | None:
        return next((r.html for r in self.results if r.html), None)


OutputHandler = Callable[[str], Any]
ResultHandler = Callable[[Result], Any]
ErrorHandler = Callable[[ExecutionError], Any]


@dataclass
class Handlers:
    on_stdout: OutputHandler | None = None
    on_stderr: OutputHandler | None = None
    on_result: ResultHandler | None = None
    on_error: ErrorHandler | None = None


def parse_event(line: str | bytes) -> dict[str, Any]:
    event = json.loads(line)
    if not isinstance(event, dict) or "type" not in event:
        raise ValueError(f"not an execution event: {line!r}")
    return event


def apply_event(execution: Execution, event: dict[str, Any], handlers: Handlers) -> Any:
    """Fold one NDJSON event into ``execution`` and return the handler's return value, if any."""
    kind = event["type"]
    if kind == "stdout":
        execution.stdout_parts.append(event["text"])
        return handlers.on_stdout and handlers.on_stdout(event["text"])
    if kind == "stderr":
        execution.stderr_parts.append(event["text"])
        return handlers.on_stderr and handlers.on_stderr(event["text"])
    if kind == "result":
        result = Result.from_bundle(event.get("data", {}), bool(event.get("is_main_result")))
        execution.results.append(result)
        return handlers.on_result and handlers.on_result(result)
    if kind == "error":
        execution.error = ExecutionError(event["name"], event["value"], event.get("traceback", ""))
        return handlers.on_error and handlers.on_error(execution.error)
    if kind == "end_of_execution":
        execution.execution_count = event.get("execution_count")
    return None
