"""A scripted model server: real HTTP on 127.0.0.1 speaking Anthropic's and OpenAI's streaming formats.

Each request takes the next scripted reply; streamed replies go out in small chunked writes, with
SSE events split mid-line, so clients really stream. Every request is recorded for assertions::

    with ScriptedModelServer() as server:
        server.script(anthropic_tool_call("run_python", {"code": "1 + 1"}), anthropic_text("It is 2."))
        provider, model = provider_for("anthropic/claude-test", env=server.env())
        ...  # run the agent
        assert server.requests[1].json["messages"][-1]["content"][0]["type"] == "tool_result"

As a pytest fixture::

    @pytest.fixture
    def model_server() -> Iterator[ScriptedModelServer]:
        with ScriptedModelServer() as server:
            yield server

Replies: ``anthropic_text``, ``anthropic_tool_call``, ``anthropic_events`` (any event list),
``anthropic_error``; ``openai_text``, ``openai_tool_call``, ``openai_chunks``, ``openai_error``;
``error`` (any status and body) and ``raw`` (any bytes). ``reply.cut(after_chunks=n)`` drops the
connection mid-answer; ``reply.paced(seconds)`` streams slowly (for stop-button tests).

Anthropic replies answer only POST .../v1/messages and OpenAI replies only .../chat/completions:
a request to another path gets a 404 and leaves the reply queued. A request with nothing left to
answer gets a 418 whose message says so. On a clean exit, replies never requested fail the test.
"""

from __future__ import annotations

import dataclasses
import json
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

ANTHROPIC_PATH = "/v1/messages"
OPENAI_PATH = "/chat/completions"
EVENT_STREAM = {"content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache"}


@dataclass(frozen=True)
class Reply:
    """One scripted HTTP response, its body written as these chunks."""

    status: int
    chunks: tuple[bytes, ...]
    headers: dict[str, str] = field(default_factory=dict)
    path_suffix: str | None = None  # the request path must end with this, else 404
    pause: float = 0.002  # seconds between chunks
    cut_after: int | None = None  # drop the connection after this many chunks

    def cut(self, after_chunks: int) -> Reply:
        """This reply with the connection dropped after ``after_chunks`` chunks of its body."""
        return dataclasses.replace(self, cut_after=after_chunks)

    def paced(self, seconds: float) -> Reply:
        """This reply with ``seconds`` between chunks."""
        return dataclasses.replace(self, pause=seconds)


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


class ScriptedModelServer:
    """A threaded HTTP server on 127.0.0.1 (a free port) that answers from a queue of replies."""

    def __init__(self, *, expect_all_used: bool = True) -> None:
        self.expect_all_used = expect_all_used
        self.requests: list[RecordedRequest] = []
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.01},
            name="model-server",
            daemon=True,
        )

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``: Anthropic's base URL (it adds /v1/messages)."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_base_url(self) -> str:
        """``<url>/v1``: an OpenAI-style base URL (it adds /chat/completions)."""
        return f"{self.url}/v1"

    def env(self, **overrides: str) -> dict[str, str]:
        """Environment for ``provider_for``: every provider pointed here, with test keys."""
        return {
            "ANTHROPIC_API_KEY": "test-anthropic-key",
            "ANTHROPIC_BASE_URL": self.url,
            "OPENAI_API_KEY": "test-openai-key",
            "OPENAI_BASE_URL": self.openai_base_url,
            "OLLAMA_BASE_URL": self.openai_base_url,
            **overrides,
        }

    def script(self, *replies: Reply) -> None:
        """Queue replies: each request takes the next one."""
        with self._lock:
            self._replies.extend(replies)

    @property
    def pending(self) -> int:
        """How many scripted replies no request has taken yet."""
        with self._lock:
            return len(self._replies)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
        if exc_type is None and self.expect_all_used and self.pending:
            raise AssertionError(f"{self.pending} scripted model replies were never requested")

    def _answer(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            if not self._replies:
                return _server_error(418, f"no reply scripted for request #{len(self.requests)}")
            reply = self._replies[0]
            if reply.path_suffix and not request.path.endswith(reply.path_suffix):
                message = f"the next reply answers POST ...{reply.path_suffix}, not {request.path}"
                return _server_error(404, message)
            return self._replies.popleft()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: ScriptedModelServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 10
    server: _Server

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        headers = {name.lower(): value for name, value in self.headers.items()}
        reply = self.server.owner._answer(RecordedRequest(self.command, self.path, headers, body))
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.send_header("transfer-encoding", "chunked")
        self.send_header("connection", "close")
        try:
            self.end_headers()
            for number, chunk in enumerate(reply.chunks):
                if number == reply.cut_after:
                    return
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                time.sleep(reply.pause)
            if reply.cut_after is None:
                self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            return  # the client stopped reading: nothing left to do

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read ``requests`` instead."""


def _server_error(status: int, message: str) -> Reply:
    kind = "not_found_error" if status == 404 else "invalid_request_error"
    return error(
        status, {"type": "error", "error": {"type": kind, "message": f"ScriptedModelServer: {message}"}}
    )


# Building blocks -------------------------------------------------------------------------------


def sse(event: str | None, data: Any) -> bytes:
    """One server-sent event; ``data`` is JSON-encoded unless it is already a str."""
    text = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return (head + "".join(f"data: {line}\n" for line in text.split("\n")) + "\n").encode()


def _halves(events: list[bytes]) -> tuple[bytes, ...]:
    """Each event in two chunks, split mid-line, so a client must reassemble them."""
    return tuple(part for event in events for part in (event[: len(event) // 2], event[len(event) // 2 :]))


def _words(text: str | list[str]) -> list[str]:
    """Deltas: the list as given, or the text split before each word ("Hello", " world")."""
    return list(text) if isinstance(text, list) else re.findall(r"\s*\S+\s*$|\s*\S+", text)


def _pieces(text: str, count: int) -> list[str]:
    """``text`` in ``count`` roughly equal, non-empty pieces."""
    size = max(1, -(-len(text) // count))
    return [text[start : start + size] for start in range(0, len(text), size)] or [""]


def _arguments(arguments: dict[str, Any] | str) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def error(status: int, body: dict[str, Any] | str, headers: dict[str, str] | None = None) -> Reply:
    """An error response: a dict body is sent as JSON, a str as plain text."""
    if isinstance(body, str):
        content, content_type = body.encode(), "text/plain; charset=utf-8"
    else:
        content, content_type = json.dumps(body).encode(), "application/json"
    return Reply(status, (content,), {"content-type": content_type, **(headers or {})})


def raw(
    status: int, body: bytes, content_type: str = "text/event-stream", headers: dict[str, str] | None = None
) -> Reply:
    """Exactly these bytes, in two chunks, on any path: for garbage and framing tests."""
    return Reply(status, _halves([body]), {"content-type": content_type, **(headers or {})})


# Anthropic Messages ----------------------------------------------------------------------------


def anthropic_events(events: list[dict[str, Any]], *, headers: dict[str, str] | None = None) -> Reply:
    """A stream of Anthropic events, each named by its "type", exactly as given."""
    body = [sse(event.get("type"), event) for event in events]
    return Reply(200, _halves(body), {**EVENT_STREAM, **(headers or {})}, path_suffix=ANTHROPIC_PATH)


def anthropic_text(
    text: str | list[str],
    *,
    stop_reason: str = "end_turn",
    input_tokens: int = 12,
    output_tokens: int = 7,
    model: str = "claude-test",
) -> Reply:
    """An answer of text only: one text_delta per word, or per item of a list."""
    return anthropic_events(
        [
            *_anthropic_start(model, input_tokens),
            *_anthropic_text_block(0, _words(text)),
            *_anthropic_stop(stop_reason, output_tokens),
        ]
    )


def anthropic_tool_call(
    name: str,
    arguments: dict[str, Any] | str,
    *,
    text_before: str | None = None,
    tool_id: str = "toolu_01",
    pieces: int = 3,
    input_tokens: int = 12,
    output_tokens: int = 7,
    model: str = "claude-test",
) -> Reply:
    """An answer calling one tool, its JSON arguments (a str is sent as is) in ``pieces`` deltas."""
    events = _anthropic_start(model, input_tokens)
    index = 0
    if text_before:
        events += _anthropic_text_block(0, _words(text_before))
        index = 1
    block = {"type": "tool_use", "id": tool_id, "name": name, "input": {}}
    events.append({"type": "content_block_start", "index": index, "content_block": block})
    for piece in _pieces(_arguments(arguments), pieces):
        delta = {"type": "input_json_delta", "partial_json": piece}
        events.append({"type": "content_block_delta", "index": index, "delta": delta})
    events.append({"type": "content_block_stop", "index": index})
    return anthropic_events(events + _anthropic_stop("tool_use", output_tokens))


def anthropic_error(status: int, kind: str, message: str, headers: dict[str, str] | None = None) -> Reply:
    """Anthropic's error body, e.g. ``anthropic_error(529, "overloaded_error", "Overloaded")``."""
    return error(status, {"type": "error", "error": {"type": kind, "message": message}}, headers)


def _anthropic_start(model: str, input_tokens: int) -> list[dict[str, Any]]:
    message = {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": 1},
    }
    return [{"type": "message_start", "message": message}, {"type": "ping"}]


def _anthropic_text_block(index: int, deltas: list[str]) -> list[dict[str, Any]]:
    start = {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
    middle = [
        {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}}
        for text in deltas
    ]
    return [start, *middle, {"type": "content_block_stop", "index": index}]


def _anthropic_stop(stop_reason: str, output_tokens: int) -> list[dict[str, Any]]:
    delta = {"stop_reason": stop_reason, "stop_sequence": None}
    return [
        {"type": "message_delta", "delta": delta, "usage": {"output_tokens": output_tokens}},
        {"type": "message_stop"},
    ]


# OpenAI Chat Completions -----------------------------------------------------------------------


def openai_chunks(
    chunks: list[dict[str, Any]], *, done: bool = True, headers: dict[str, str] | None = None
) -> Reply:
    """``data:`` events of these chunk objects, then ``data: [DONE]`` unless ``done`` is False."""
    body = [sse(None, chunk) for chunk in chunks] + ([sse(None, "[DONE]")] if done else [])
    return Reply(200, _halves(body), {**EVENT_STREAM, **(headers or {})}, path_suffix=OPENAI_PATH)


def openai_chunk(
    delta: dict[str, Any], finish_reason: str | None = None, model: str = "gpt-test"
) -> dict[str, Any]:
    """One chat.completion.chunk with a single choice."""
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
    return {**_openai_envelope(model), "choices": [choice], "usage": None}


def openai_text(
    text: str | list[str],
    *,
    finish_reason: str = "stop",
    prompt_tokens: int = 12,
    completion_tokens: int = 7,
    model: str = "gpt-test",
) -> Reply:
    """An answer of text only: one content delta per word, or per item of a list."""
    return openai_chunks(
        [
            openai_chunk({"role": "assistant", "content": ""}, model=model),
            *(openai_chunk({"content": word}, model=model) for word in _words(text)),
            openai_chunk({}, finish_reason, model),
            _openai_usage(model, prompt_tokens, completion_tokens),
        ]
    )


def openai_tool_call(
    name: str,
    arguments: dict[str, Any] | str,
    *,
    text_before: str | None = None,
    call_id: str = "call_01",
    pieces: int = 3,
    prompt_tokens: int = 12,
    completion_tokens: int = 7,
    model: str = "gpt-test",
) -> Reply:
    """An answer calling one tool, its JSON arguments (a str is sent as is) in ``pieces`` deltas."""
    chunks = [openai_chunk({"role": "assistant", "content": ""}, model=model)]
    chunks += [openai_chunk({"content": word}, model=model) for word in _words(text_before or "")]
    opening = {"index": 0, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
    chunks.append(openai_chunk({"tool_calls": [opening]}, model=model))
    for piece in _pieces(_arguments(arguments), pieces):
        fragment = {"index": 0, "function": {"arguments": piece}}
        chunks.append(openai_chunk({"tool_calls": [fragment]}, model=model))
    chunks += [openai_chunk({}, "tool_calls", model), _openai_usage(model, prompt_tokens, completion_tokens)]
    return openai_chunks(chunks)


def openai_error(
    status: int,
    message: str,
    *,
    type: str = "invalid_request_error",
    code: str | None = None,
    headers: dict[str, str] | None = None,
) -> Reply:
    """OpenAI's error body, e.g. ``openai_error(404, "no such model", code="model_not_found")``."""
    return error(status, {"error": {"message": message, "type": type, "param": None, "code": code}}, headers)


def _openai_envelope(model: str) -> dict[str, Any]:
    return {"id": "chatcmpl-01", "object": "chat.completion.chunk", "created": 1700000000, "model": model}


def _openai_usage(model: str, prompt_tokens: int, completion_tokens: int) -> dict[str, Any]:
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    return {**_openai_envelope(model), "choices": [], "usage": usage}
