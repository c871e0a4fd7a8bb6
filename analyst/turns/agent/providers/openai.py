"""OpenAI's Chat Completions API, streamed; also any OpenAI-compatible server (Ollama, vLLM ...)."""

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
    BadRequest,
    MalformedStream,
    ProviderError,
    ProviderUnavailable,
    UnknownModel,
    from_status,
    wrong_endpoint,
)
from analyst.turns.agent.providers.http import FIRST_BYTE_TIMEOUT, IDLE_TIMEOUT, HttpProvider
from analyst.turns.agent.providers.retry import open_stream
from analyst.turns.agent.providers.sse import ServerSentEvent, iter_events

DEFAULT_BASE_URL = "https://api.openai.com/v1"
OPENAI_HOST = "api.openai.com"
IMAGE_OMITTED = "[image omitted: this model does not accept images]"
STOP_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
}
# Error codes that say more than the HTTP status: quota is a 429 that no retry will fix.
# Azure OpenAI's 404 for a deployment it does not have names it by code, not in the message.
ERROR_CODES: dict[str, type[ProviderError]] = {
    "model_not_found": UnknownModel,
    "DeploymentNotFound": UnknownModel,
    "insufficient_quota": BadRequest,
}


class OpenAIProvider(HttpProvider):
    """Models behind POST {base_url}/chat/completions with ``stream: true``.

    ``api_key`` may be None for servers that need none (Ollama). ``max_tokens_field`` names the
    length limit; by default it follows ``base_url``: OpenAI's own API wants "max_completion_tokens"
    (its reasoning models refuse "max_tokens"), while compatible servers (Ollama, vLLM, LM Studio)
    read only "max_tokens" and silently ignore the other. ``base_url_setting`` is the variable an
    error about a wrong base URL tells the user to check.
    """

    def __init__(
        self,
        api_key: str | None,
        *,
        base_url: str = DEFAULT_BASE_URL,
        http: httpx.Client | None = None,
        max_retries: int = 3,
        first_byte_timeout: float = FIRST_BYTE_TIMEOUT,
        idle_timeout: float = IDLE_TIMEOUT,
        supports_images: bool = True,
        max_tokens_field: str | None = None,
        base_url_setting: str = "OPENAI_BASE_URL",
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """See HttpProvider for the timeouts; ``max_retries`` come after the first try."""
        self.supports_images = supports_images
        self._base_url_setting = base_url_setting
        self._headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._max_tokens_field = max_tokens_field or max_tokens_field_for(base_url)
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
        body: dict[str, Any] = {
            "model": model,
            "messages": wire_messages(system, messages, images=self.supports_images),
            "stream": True,
            "stream_options": {"include_usage": True},
            self._max_tokens_field: max_tokens,
        }
        if tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
                }
                for t in tools
            ]
        request = self._http.build_request(
            "POST", self._endpoint(model), json=body, headers=self._headers, timeout=self._timeout
        )
        opened = open_stream(
            self._http,
            request,
            self._retry,
            self._error_from_response,
            idle_timeout=self._idle_timeout,
            on_retry=on_retry,
        )
        with opened as response:
            yield from parse_stream(iter_events(response))

    def _endpoint(self, model: str) -> httpx.URL:
        """Where a request for ``model`` goes (Azure names its deployment in the path)."""
        return httpx.URL(self._url)

    def _error_from_response(self, response: httpx.Response) -> ProviderError:
        return error_from_response(response, base_url_setting=self._base_url_setting)


def max_tokens_field_for(base_url: str) -> str:
    """The body field that limits the answer's length at ``base_url``.

    OpenAI's API (api.openai.com and its regional hosts such as us.api.openai.com) takes
    "max_completion_tokens"; any other server is an OpenAI-compatible one, which takes "max_tokens".
    """
    host = (httpx.URL(base_url).host or "").lower()
    if host == OPENAI_HOST or host.endswith("." + OPENAI_HOST):
        return "max_completion_tokens"
    return "max_tokens"


def wire_messages(system: str, messages: list[ChatMessage], *, images: bool) -> list[dict[str, Any]]:
    """The conversation as Chat Completions messages, the system prompt first.

    Tool results become "tool" messages (text only); images they hold follow in one user message,
    or become a note when the model takes no images.
    """
    wire: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        wire += _assistant(message) if message.role == "assistant" else _user(message, images)
    return wire


def _assistant(message: ChatMessage) -> list[dict[str, Any]]:
    text, calls = [], []
    for part in message.parts:
        if isinstance(part, TextPart):
            text.append(part.text)
        elif isinstance(part, ToolCallPart):
            arguments = json.dumps(part.arguments)
            calls.append(
                {"id": part.id, "type": "function", "function": {"name": part.name, "arguments": arguments}}
            )
        else:
            raise ValueError(f"an assistant message cannot hold {type(part).__name__}")
    wire: dict[str, Any] = {"role": "assistant", "content": "".join(text) or None}
    if calls:
        wire["tool_calls"] = calls
    return [wire]


def _user(message: ChatMessage, images: bool) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    content: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, ToolResultPart):
            results.append(_tool_message(part, images))
            if images:
                content += [_image(image) for image in part.content if isinstance(image, ImagePart)]
        elif isinstance(part, TextPart):
            content.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            content.append(_image(part) if images else {"type": "text", "text": IMAGE_OMITTED})
        else:
            raise ValueError(f"a user message cannot hold {type(part).__name__}")
    if not content:
        return results
    if all(item["type"] == "text" for item in content):
        # Plain strings suit every OpenAI-compatible server; part lists only where images need them.
        return [*results, {"role": "user", "content": "\n".join(item["text"] for item in content)}]
    return [*results, {"role": "user", "content": content}]


def _tool_message(result: ToolResultPart, images: bool) -> dict[str, Any]:
    texts = []
    for part in result.content:
        if isinstance(part, TextPart):
            texts.append(part.text)
        else:
            texts.append("[image attached in the next message]" if images else IMAGE_OMITTED)
    text = "\n".join(texts)
    return {
        "role": "tool",
        "tool_call_id": result.tool_call_id,
        "content": f"Error: {text}" if result.is_error else text,
    }


def _image(image: ImagePart) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{image.media_type};base64,{image.data}"}}


def error_from_response(
    response: httpx.Response, *, base_url_setting: str = "OPENAI_BASE_URL"
) -> ProviderError:
    """The error an error response stands for: ``{"error": {"message", "type", "code"}}``.

    A 404 names an unknown model when its code is model_not_found (Azure's: DeploymentNotFound)
    or its message speaks of a model (Ollama: "model \"x\" not found, try pulling it first");
    any other 404 (OpenAI's
    "Invalid URL (POST /v1/v1/chat/completions)") means ``base_url_setting`` is wrong.
    """
    try:
        body = response.json()
    except ValueError:
        body = None
    status = response.status_code
    detail = body.get("error") if isinstance(body, dict) else None
    if status == 404 and not _names_a_model(detail):
        return wrong_endpoint(response.request, base_url_setting)
    if detail is None:
        return from_status(status, f"openai-compatible server answered HTTP {status}: {response.text[:200]}")
    return _error(detail, status)


def _names_a_model(detail: object) -> bool:
    if isinstance(detail, dict):
        if ERROR_CODES.get(str(detail.get("code"))) is UnknownModel:
            return True
        detail = detail.get("message", "")
    return isinstance(detail, str) and "model" in detail.lower()


def _error(detail: object, status: int | None) -> ProviderError:
    """``status`` is None for an error sent inside the stream: then the service counts as failing."""
    if isinstance(detail, dict):
        message, code = str(detail.get("message", "")), str(detail.get("code") or detail.get("type") or "")
    else:
        message, code = str(detail), ""  # Ollama and others: {"error": "model 'x' not found"}
    text = f"openai {code or 'error'}" + (f" (HTTP {status})" if status else " mid-stream") + f": {message}"
    if code in ERROR_CODES:
        return ERROR_CODES[code](text)
    return from_status(status, text) if status else ProviderUnavailable(text)


def parse_stream(events: Iterable[ServerSentEvent]) -> Iterator[StreamEvent]:
    """Chat completion chunks as TextDelta, ToolCall (once the choice finishes) and Finished.

    Only the choice with index 0 is read. Refusal text (``delta.refusal``) is collected into
    Finished's ``refusal``, not streamed as text. Raises MalformedStream for chunks that are not
    objects or a stream that ends without a finish_reason, and the matching ProviderError for an
    error chunk.
    """
    answer = _Answer()
    for event in events:
        if event.data.strip() == "[DONE]":
            break
        chunk = event.json()
        if not isinstance(chunk, dict):
            raise MalformedStream(f"a chunk that is not an object: {event.data[:200]!r}")
        if "error" in chunk:
            raise _error(chunk["error"], None)
        try:
            yield from answer.apply(chunk)
        except (KeyError, TypeError, AttributeError) as exc:
            raise MalformedStream(f"unexpected chunk: {event.data[:200]}") from exc
    if answer.finish_reason is None:
        raise MalformedStream("the stream ended without a finish_reason")
    yield answer.finished()


@dataclass
class _PendingCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class _Answer:
    calls: dict[int, _PendingCall] = field(default_factory=dict)
    refusal: list[str] = field(default_factory=list)
    finish_reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None

    def apply(self, chunk: dict[str, Any]) -> Iterator[StreamEvent]:
        if chunk.get("usage"):
            self.input_tokens = chunk["usage"].get("prompt_tokens")
            self.output_tokens = chunk["usage"].get("completion_tokens")
        choice = next((c for c in chunk.get("choices") or [] if c.get("index", 0) == 0), None)
        if choice is None or self.finish_reason is not None:
            return
        delta = choice.get("delta") or {}
        if delta.get("content"):
            yield TextDelta(delta["content"])
        if delta.get("refusal"):
            self.refusal.append(delta["refusal"])
        for fragment in delta.get("tool_calls") or []:
            self._add(fragment)
        if choice.get("finish_reason"):
            self.finish_reason = choice["finish_reason"]
            cut_off = self.finish_reason == "length"
            for call in self.calls.values():
                yield ToolCall.parse(call.id, call.name, "".join(call.arguments), cut_off=cut_off)

    def finished(self) -> Finished:
        reason = STOP_REASONS.get(self.finish_reason or "", self.finish_reason or "")
        if self.calls and reason == "end_turn":  # some compatible servers say "stop" after calls
            reason = "tool_use"
        refusal = "".join(self.refusal) or None
        if refusal is not None:
            reason = "refusal"
        return Finished(reason, self.input_tokens, self.output_tokens, refusal)

    def _add(self, fragment: dict[str, Any]) -> None:
        index = fragment.get("index")
        if index is None:
            # Some compatible servers omit it: a fragment with an id starts a call, others continue one.
            index = len(self.calls) if fragment.get("id") or not self.calls else max(self.calls)
        call = self.calls.setdefault(index, _PendingCall())
        call.id = fragment.get("id") or call.id
        function = fragment.get("function") or {}
        call.name = function.get("name") or call.name
        call.arguments.append(function.get("arguments") or "")
