"""Anthropic's Messages API, streamed: the request body, the event stream, the error bodies."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from analyst.turns.agent.providers.base import (
    ChatMessage,
    Finished,
    ImagePart,
    Part,
    RetryListener,
    StreamEvent,
    TextDelta,
    TextPart,
    ToolCall,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)
from analyst.turns.agent.providers.errors import (
    AuthenticationFailed,
    BadRequest,
    MalformedStream,
    MissingApiKey,
    ProviderError,
    ProviderUnavailable,
    RateLimited,
    UnknownModel,
    from_status,
    wrong_endpoint,
)
from analyst.turns.agent.providers.http import FIRST_BYTE_TIMEOUT, IDLE_TIMEOUT, HttpProvider
from analyst.turns.agent.providers.retry import open_stream
from analyst.turns.agent.providers.sse import ServerSentEvent, iter_events

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"

# Anthropic's stop reasons in the providers' shared words; others (pause_turn ...) pass as they are.
STOP_REASONS = {"stop_sequence": "end_turn"}
ERROR_TYPES: dict[str, type[ProviderError]] = {
    "authentication_error": AuthenticationFailed,
    "permission_error": AuthenticationFailed,
    "not_found_error": UnknownModel,
    "rate_limit_error": RateLimited,
    "overloaded_error": ProviderUnavailable,
    "api_error": ProviderUnavailable,
    "invalid_request_error": BadRequest,
    "request_too_large": BadRequest,
}


class AnthropicProvider(HttpProvider):
    """Claude models through POST {base_url}/v1/messages with ``stream: true``."""

    supports_images = True

    def __init__(
        self,
        api_key: str | None,
        *,
        base_url: str = DEFAULT_BASE_URL,
        http: httpx.Client | None = None,
        max_retries: int = 3,
        first_byte_timeout: float = FIRST_BYTE_TIMEOUT,
        idle_timeout: float = IDLE_TIMEOUT,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """See HttpProvider for the timeouts; ``max_retries`` come after the first try.

        Raises MissingApiKey if ``api_key`` is empty.
        """
        if not api_key:
            raise MissingApiKey("anthropic", "ANTHROPIC_API_KEY")
        self._api_key = api_key
        self._url = base_url.rstrip("/") + "/v1/messages"
        super().__init__(
            http=http,
            first_byte_timeout=first_byte_timeout,
            idle_timeout=idle_timeout,
            max_retries=max_retries,
            sleep=sleep,
        )

    def stream(
        self,
        *,
        model: str,
        system: str,
        messages: list[ChatMessage],
        tools: list[ToolSpec],
        max_tokens: int,
        on_retry: RetryListener | None = None,
    ) -> Iterator[StreamEvent]:
        request = self._http.build_request(
            "POST",
            self._url,
            json=request_body(
                model=model, system=system, messages=messages, tools=tools, max_tokens=max_tokens
            ),
            headers={"x-api-key": self._api_key, "anthropic-version": API_VERSION},
            timeout=self._timeout,
        )
        opened = open_stream(
            self._http,
            request,
            self._retry,
            error_from_response,
            idle_timeout=self._idle_timeout,
            on_retry=on_retry,
        )
        with opened as response:
            yield from parse_stream(iter_events(response))


def request_body(
    *, model: str, system: str, messages: list[ChatMessage], tools: list[ToolSpec], max_tokens: int
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "stream": True,
        "messages": [{"role": m.role, "content": _content(m.parts)} for m in messages],
    }
    if system:
        body["system"] = system
    if tools:
        body["tools"] = [
            {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}
            for tool in tools
        ]
    return body


def _content(parts: Iterable[Part]) -> list[dict[str, Any]]:
    # The API refuses empty text blocks, and wants tool results before anything else in a message.
    blocks = [_block(part) for part in parts if not (isinstance(part, TextPart) and not part.text)]
    return sorted(blocks, key=lambda block: block["type"] != "tool_result")


def _block(part: Part) -> dict[str, Any]:
    match part:
        case TextPart(text):
            return {"type": "text", "text": text}
        case ImagePart(media_type, data):
            return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}
        case ToolCallPart(id, name, arguments):
            return {"type": "tool_use", "id": id, "name": name, "input": arguments}
        case ToolResultPart(tool_call_id, content, is_error):
            return {
                "type": "tool_result",
                "tool_use_id": tool_call_id,
                "content": _content(content),
                "is_error": is_error,
            }
    raise TypeError(f"not a message part: {part!r}")


def error_from_response(response: httpx.Response) -> ProviderError:
    """The error an error response stands for: ``{"type": "error", "error": {"type", "message"}}``.

    A 404 names an unknown model only when its message says "model: ..."; any other 404 (the
    API's "Not Found" for an unknown path, or a server that is not Anthropic's) means the base
    URL is wrong.
    """
    try:
        body = response.json()
    except ValueError:
        body = None
    status = response.status_code
    detail = body.get("error") if isinstance(body, dict) else None
    kind = str(detail.get("type", "")) if isinstance(detail, dict) else ""
    message = str(detail.get("message", "")) if isinstance(detail, dict) else response.text[:200]
    if status == 404 and not (kind == "not_found_error" and message.startswith("model")):
        return wrong_endpoint(response.request, "ANTHROPIC_BASE_URL")
    if not isinstance(detail, dict):
        return from_status(status, f"anthropic answered HTTP {status}: {message}")
    cls = ERROR_TYPES.get(kind)
    text = f"anthropic {kind or 'error'} (HTTP {status}): {message}"
    return cls(text) if cls else from_status(status, text)


def _error_from_event(data: dict[str, Any]) -> ProviderError:
    """The error an in-stream ``error`` event carries; unknown kinds count as a failing service."""
    detail = data.get("error")
    if not isinstance(detail, dict):
        return MalformedStream(f"error event without an error: {data}")
    kind, message = str(detail.get("type", "")), str(detail.get("message", ""))
    return ERROR_TYPES.get(kind, ProviderUnavailable)(f"anthropic {kind or 'error'} mid-stream: {message}")


def parse_stream(events: Iterable[ServerSentEvent]) -> Iterator[StreamEvent]:
    """Anthropic's events as TextDelta, ToolCall (once the stop reason is known) and a final Finished.

    Blocks other than text and tool_use (thinking, server tools, types added later) are skipped.
    Raises MalformedStream for events out of order or a stream that ends before message_stop,
    and the matching ProviderError for an ``error`` event.
    """
    message = _Message()
    for event in events:
        data = event.json()
        if not isinstance(data, dict):
            raise MalformedStream(f"{event.event} event data is not an object: {event.data[:200]!r}")
        kind = data.get("type", event.event)
        if kind == "error":
            raise _error_from_event(data)
        try:
            yield from message.apply(kind, data)
        except (KeyError, TypeError, AttributeError) as exc:
            raise MalformedStream(f"unexpected {kind} event: {event.data[:200]}") from exc
        if message.stopped:
            cut_off = message.stop_reason == "max_tokens"
            for block in message.tool_calls:
                yield ToolCall.parse(block.id, block.name, block.raw_arguments(), cut_off=cut_off)
            reason = STOP_REASONS.get(message.stop_reason or "", message.stop_reason or "")
            yield Finished(reason, message.input_tokens, message.output_tokens)
            return
    raise MalformedStream("the stream ended before message_stop")


@dataclass
class _Block:
    kind: str  # "text", "tool_use", or another type whose deltas are ignored
    id: str = ""
    name: str = ""
    initial_input: str = ""  # the input the start carried, used if no input_json_delta comes
    json_parts: list[str] = field(default_factory=list)

    def raw_arguments(self) -> str:
        return "".join(self.json_parts) if self.json_parts else self.initial_input


@dataclass
class _Message:
    started: bool = False
    stopped: bool = False
    blocks: dict[int, _Block] = field(default_factory=dict)
    tool_calls: list[_Block] = field(default_factory=list)  # ended tool_use blocks, in order
    stop_reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None

    def apply(self, kind: str, data: dict[str, Any]) -> Iterator[StreamEvent]:
        if kind == "ping":
            return
        if kind == "message_start":
            if self.started:
                raise MalformedStream("a second message_start")
            self.started = True
            self._usage(data["message"].get("usage") or {})
            return
        if not self.started:
            raise MalformedStream(f"{kind} before message_start")
        if kind == "content_block_start":
            yield from self._start(data["index"], data["content_block"])
        elif kind == "content_block_delta":
            yield from self._delta(self._open(data["index"]), data["delta"])
        elif kind == "content_block_stop":
            self._close(data["index"])
        elif kind == "message_delta":
            self.stop_reason = data["delta"].get("stop_reason") or self.stop_reason
            self._usage(data.get("usage") or {})
        elif kind == "message_stop":
            if not self.stop_reason:
                raise MalformedStream("message_stop without a stop_reason")
            if self.blocks and self.stop_reason != "max_tokens":
                raise MalformedStream(f"message_stop with content blocks {sorted(self.blocks)} still open")
            for index in sorted(self.blocks):  # the length limit cut them off mid-block
                self._close(index)
            self.stopped = True
        # Other event types are new additions to the protocol: ignored, as Anthropic asks.

    def _start(self, index: int, block: dict[str, Any]) -> Iterator[StreamEvent]:
        if index in self.blocks:
            raise MalformedStream(f"content block {index} started twice")
        kind = block["type"]
        if kind == "tool_use":
            initial = json.dumps(block["input"]) if block.get("input") else ""
            self.blocks[index] = _Block(kind, block["id"], block["name"], initial)
            return
        self.blocks[index] = _Block(kind)
        if kind == "text" and block.get("text"):
            yield TextDelta(block["text"])

    def _delta(self, block: _Block, delta: dict[str, Any]) -> Iterator[StreamEvent]:
        kind = delta["type"]
        if kind == "text_delta":
            if block.kind == "tool_use":
                raise MalformedStream("text_delta in a tool_use block")
            if block.kind == "text" and delta["text"]:
                yield TextDelta(delta["text"])
        elif kind == "input_json_delta" and block.kind == "tool_use":
            block.json_parts.append(delta["partial_json"])
        # Deltas of other blocks (thinking, signatures, a server tool's input, citations) are
        # not ours to read.

    def _close(self, index: int) -> None:
        block = self._open(index)
        del self.blocks[index]
        if block.kind == "tool_use":
            self.tool_calls.append(block)

    def _open(self, index: int) -> _Block:
        if index not in self.blocks:
            raise MalformedStream(f"content block {index} is not open")
        return self.blocks[index]

    def _usage(self, usage: dict[str, Any]) -> None:
        self.input_tokens = usage.get("input_tokens", self.input_tokens)
        self.output_tokens = usage.get("output_tokens", self.output_tokens)
