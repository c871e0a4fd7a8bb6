"""A scripted model server: real HTTP on 127.0.0.1 speaking Anthropic's, OpenAI's and Ollama's APIs.

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
``azure_text``, ``azure_error`` (any OpenAI reply answers Azure's endpoint too);
``error`` (any status and body), ``raw`` (any bytes) and ``recorded`` (a recorded stream's file,
byte for byte). ``reply.cut(after_chunks=n)`` drops the connection mid-answer;
``reply.paced(seconds)`` streams slowly (for stop-button tests). JSON goes out as raw UTF-8, never
``\\uXXXX`` escapes, as the real APIs send it.

The server is as strict as the real APIs, answering with their status codes and error bodies:

- Anthropic, POST exactly ``{url}/v1/messages``: 401 without ``x-api-key``; 400 without the
  ``anthropic-version`` header, ``model``, ``max_tokens`` or ``messages``; 400 when the first
  message is not the user's, on empty content (but for a final assistant message), on an empty or
  all-whitespace text block, on a ``tool_result`` answering no ``tool_use`` of the message before,
  and on a ``tool_use`` whose ``tool_result`` does not lead the next message. Consecutive messages
  of one role are merged first, as the API does (its error for such a request, recorded in
  anthropic-sdk-python, counts the merged messages).
- OpenAI, POST exactly ``{openai_base_url}/chat/completions``: 401 without
  ``Authorization: Bearer ...``; 400 without ``model`` or ``messages``, on an assistant message with
  neither content nor tool_calls, on a ``tool`` message answering no tool_call of the assistant
  message before it, and on tool_calls not each answered by the tool messages right after.
  OpenAI's reasoning models (o1, o3, o4-mini, gpt-5 ...) refuse ``max_tokens`` with its 400
  ``unsupported_parameter``.
- Ollama, POST exactly ``{ollama_base_url}/chat/completions``: OpenAI's rules without a key.
  Ollama reads ``max_tokens`` and ignores ``max_completion_tokens``; it refuses neither, so a test
  asserts the field in ``requests[n].json``.
- Azure OpenAI, POST exactly ``{azure_endpoint}/openai/deployments/<deployment>/chat/completions
  ?api-version=<yyyy-mm-dd[-preview]>``: 401 without an ``api-key`` header (a Bearer key is not
  one); 404 "Resource not found" without a well-formed ``api-version`` or at any other path under
  ``/openai/``; 404 ``DeploymentNotFound`` for a deployment not in ``azure_deployments``; then
  OpenAI's rules, but for ``model``, which the path names. Bodies as Azure answers them:
  ``{"error": {"code": "401", "message": ...}}``, quoted from the SDK users' reports cited at
  ``AZURE_*`` below.
- Any other path gets the 404 that API answers for it (Anthropic's ``not_found_error``, OpenAI's
  "Invalid URL (POST /path)", Ollama's plain "404 page not found").

A refused request is recorded and answered at once, and leaves the next reply queued for the
request that gets it right. Anthropic replies answer only Anthropic's endpoint and OpenAI replies
only a chat completions endpoint (OpenAI's or Ollama's): asked by the other, a reply stays queued
and the request gets a 404 saying so. A request with nothing left to answer gets a 418 whose
message says so. On a clean exit, replies never requested fail the test.
"""

from __future__ import annotations

import dataclasses
import json
import re
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self
from urllib.parse import parse_qsl, unquote, urlsplit

ANTHROPIC_PATH = "/v1/messages"
OPENAI_PATH = "/v1/chat/completions"
OLLAMA_PATH = "/ollama/v1/chat/completions"
EVENT_STREAM = {"content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache"}
OPENAI_NO_KEY = (
    "You didn't provide an API key. You need to provide your API key in an Authorization header"
    " using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (i.e."
    " user:YOUR_KEY) when using HTTP Basic Auth. You can obtain an API key from"
    " https://platform.openai.com/account/api-keys."
)

# Azure OpenAI's answers, as users of the official SDKs quoted them (status, body):
# 401 without a key: SciSharp/BotSharp#386, microsoft/semantic-kernel#10337 (code "401").
AZURE_NO_KEY = (
    "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a"
    " valid key for an active subscription and use a correct regional API endpoint for your resource."
)
# 404 without api-version, or at a wrong path: MicrosoftDocs/azure-docs#114602, BerriAI/litellm#8572.
AZURE_NOT_FOUND = "Resource not found"
# 404 for an unknown deployment: chatboxai/chatbox#861, Azure-Samples/azure-search-openai-demo-csharp#379.
AZURE_NO_DEPLOYMENT = (
    "The API deployment for this resource does not exist. If you created the deployment within the"
    " last 5 minutes, please wait a moment and try again."
)
AZURE_PATH = re.compile(r"/openai/deployments/(?P<deployment>[^/]+)/chat/completions")
AZURE_API_VERSION = re.compile(r"\d{4}-\d{2}-\d{2}(-preview)?")
AZURE_API_VERSION_USED = "2024-10-21"  # Azure OpenAI's GA version that takes stream_options
# OpenAI's reasoning models, which take only max_completion_tokens.
REASONING_MODEL = re.compile(r"(o\d|gpt-5)([-.].*)?")

Api = Literal["anthropic", "openai", "ollama", "azure"]
Protocol = Literal["messages", "chat"]  # what a reply speaks: Anthropic's Messages, or chat completions
ENDPOINTS: dict[str, Api] = {ANTHROPIC_PATH: "anthropic", OPENAI_PATH: "openai", OLLAMA_PATH: "ollama"}


@dataclass(frozen=True)
class Reply:
    """One scripted HTTP response, its body written as these chunks."""

    status: int
    chunks: tuple[bytes, ...]
    headers: dict[str, str] = field(default_factory=dict)
    protocol: Protocol | None = None  # the endpoints it answers; None: any
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

    @property
    def api(self) -> Api | None:
        """The API whose endpoint the request asked for, or None for any other path."""
        path = self.path.partition("?")[0]
        return "azure" if AZURE_PATH.fullmatch(path) else ENDPOINTS.get(path)

    @property
    def query(self) -> dict[str, str]:
        """The query string's parameters (the last value of each)."""
        return dict(parse_qsl(urlsplit(self.path).query, keep_blank_values=True))


class ScriptedModelServer:
    """A threaded HTTP server on 127.0.0.1 (a free port) that answers from a queue of replies.
    ``host`` and ``port`` serve it elsewhere: the deployment test's model container listens on
    its container's every address."""

    def __init__(
        self,
        *,
        expect_all_used: bool = True,
        azure_deployments: tuple[str, ...] = ("gpt-test-deployment",),
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.expect_all_used = expect_all_used
        self.azure_deployments = azure_deployments
        self.requests: list[RecordedRequest] = []
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server = _Server((host, port), _Handler)
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
        """``<url>/v1``: OpenAI's base URL (it adds /chat/completions)."""
        return f"{self.url}/v1"

    @property
    def ollama_base_url(self) -> str:
        """``<url>/ollama/v1``: an Ollama server's OpenAI-compatible base URL; it needs no key."""
        return f"{self.url}/ollama/v1"

    @property
    def azure_endpoint(self) -> str:
        """``<url>``: an Azure OpenAI resource's endpoint (the client adds /openai/deployments/...)."""
        return self.url

    def env(self, **overrides: str) -> dict[str, str]:
        """Environment for ``provider_for``: every provider pointed here, with test keys."""
        return {
            "ANTHROPIC_API_KEY": "test-anthropic-key",
            "ANTHROPIC_BASE_URL": self.url,
            "OPENAI_API_KEY": "test-openai-key",
            "OPENAI_BASE_URL": self.openai_base_url,
            "OLLAMA_BASE_URL": self.ollama_base_url,
            "AZURE_OPENAI_API_KEY": "test-azure-key",
            "AZURE_OPENAI_ENDPOINT": self.azure_endpoint,
            "OPENAI_API_VERSION": AZURE_API_VERSION_USED,
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
            refusal = refusal_for(request, azure_deployments=self.azure_deployments)
            if refusal is not None:
                return refusal
            if not self._replies:
                return _server_error(418, f"no reply scripted for request #{len(self.requests)}")
            reply = self._replies[0]
            protocol = "messages" if request.api == "anthropic" else "chat"
            if reply.protocol and reply.protocol != protocol:
                message = f"the next reply answers {reply.protocol} requests, not POST {request.path}"
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
    """A complaint about the test's script (not the request), in Anthropic's error shape."""
    kind = "not_found_error" if status == 404 else "invalid_request_error"
    return error(
        status, {"type": "error", "error": {"type": kind, "message": f"ScriptedModelServer: {message}"}}
    )


# What the real APIs refuse ---------------------------------------------------------------------


def refusal_for(request: RecordedRequest, *, azure_deployments: tuple[str, ...] = ()) -> Reply | None:
    """The error the real API would answer ``request`` with, or None when it would take it."""
    if request.api is None:
        return _not_found(request)
    try:
        body = json.loads(request.body)
    except ValueError:
        body = None
    if request.api == "anthropic":
        return _anthropic_refusal(request.headers, body)
    if request.api == "azure":
        return _azure_refusal(request, azure_deployments) or _chat_refusal(body, model_required=False)
    scheme, _, key = request.headers.get("authorization", "").partition(" ")
    if request.api == "openai" and not (scheme == "Bearer" and key.strip()):
        return openai_error(401, OPENAI_NO_KEY)
    if request.api == "openai" and isinstance(body, dict):
        refusal = _openai_parameter_refusal(body)
        if refusal is not None:
            return refusal
    return _chat_refusal(body)


def _azure_refusal(request: RecordedRequest, deployments: tuple[str, ...]) -> Reply | None:
    """Azure's checks before the body: the key, the API version, the deployment."""
    if not request.headers.get("api-key"):
        return azure_error(401, "401", AZURE_NO_KEY)
    if not AZURE_API_VERSION.fullmatch(request.query.get("api-version", "")):
        return azure_error(404, "404", AZURE_NOT_FOUND)
    match = AZURE_PATH.fullmatch(request.path.partition("?")[0])
    if match is None or unquote(match["deployment"]) not in deployments:
        return azure_error(404, "DeploymentNotFound", AZURE_NO_DEPLOYMENT)
    return None


def _openai_parameter_refusal(body: dict[str, Any]) -> Reply | None:
    """OpenAI's own API: its reasoning models refuse the older length limit."""
    if "max_tokens" in body and REASONING_MODEL.fullmatch(str(body.get("model", ""))):
        return openai_error(
            400,
            "Unsupported parameter: 'max_tokens' is not supported with this model."
            " Use 'max_completion_tokens' instead.",
            param="max_tokens",
            code="unsupported_parameter",
        )
    return None


def _not_found(request: RecordedRequest) -> Reply:
    if request.path.startswith("/ollama/"):
        return error(404, "404 page not found")  # Ollama's Go router, in plain text
    if request.path.startswith("/openai/") or "api-key" in request.headers:
        if not request.headers.get("api-key"):
            return azure_error(401, "401", AZURE_NO_KEY)
        return azure_error(404, "404", AZURE_NOT_FOUND)
    if "x-api-key" in request.headers or "anthropic-version" in request.headers:
        return anthropic_error(404, "not_found_error", "Not Found")
    return openai_error(404, f"Invalid URL ({request.method} {request.path})")


def _anthropic_refusal(headers: dict[str, str], body: Any) -> Reply | None:
    if not headers.get("x-api-key"):
        return anthropic_error(401, "authentication_error", "x-api-key header is required")
    if not headers.get("anthropic-version"):
        return _invalid("anthropic-version: header is required")
    if not isinstance(body, dict):
        return _invalid("The request body is not valid JSON.")
    for name in ("model", "max_tokens", "messages"):
        if name not in body:
            return _invalid(f"{name}: Field required")
    messages = body["messages"]
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        return _invalid("messages: Input should be a valid list")
    problem = _anthropic_content_problem(messages) or _anthropic_tool_problem(_merged(messages))
    return _invalid(problem) if problem else None


def _invalid(message: str) -> Reply:
    return anthropic_error(400, "invalid_request_error", message)


def _anthropic_content_problem(messages: list[dict[str, Any]]) -> str | None:
    if messages and messages[0].get("role") != "user":
        return 'messages: first message must use the "user" role'
    for number, message in enumerate(messages):
        if message.get("role") not in ("user", "assistant"):
            return f"messages.{number}.role: Input should be 'user' or 'assistant'"
        if "content" not in message:
            return f"messages.{number}.content: Field required"
        blocks = _blocks(message.get("content"))
        final_assistant = number == len(messages) - 1 and message["role"] == "assistant"
        if not blocks and not final_assistant:
            return (
                f"messages.{number}: all messages must have non-empty content except for"
                " the optional final assistant message"
            )
        texts = [block.get("text") for block in _text_blocks(blocks)]
        if any(text == "" for text in texts):
            return "messages: text content blocks must be non-empty"
        if texts and not any(isinstance(text, str) and text.strip() for text in texts):
            return "messages: text content blocks must contain non-whitespace text"
    return None


def _blocks(content: Any) -> list[dict[str, Any]]:
    """A message's content as blocks: a string is one text block (none when empty)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return [block for block in content or [] if isinstance(block, dict)]


def _text_blocks(blocks: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The text blocks among ``blocks``, those inside tool results too."""
    for block in blocks:
        if block.get("type") == "text":
            yield block
        elif block.get("type") == "tool_result" and isinstance(block.get("content"), list):
            yield from _text_blocks(block["content"])


def _merged(messages: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """Consecutive messages of one role as one, as the API joins them before it checks tool use."""
    merged: list[tuple[str, list[dict[str, Any]]]] = []
    for message in messages:
        if merged and merged[-1][0] == message["role"]:
            merged[-1][1].extend(_blocks(message["content"]))
        else:
            merged.append((message["role"], _blocks(message["content"])))
    return merged


def _anthropic_tool_problem(messages: list[tuple[str, list[dict[str, Any]]]]) -> str | None:
    for number, (role, blocks) in enumerate(messages):
        if role == "user":
            before = messages[number - 1][1] if number else []
            asked = {block.get("id") for block in before if block.get("type") == "tool_use"}
            for place, block in enumerate(blocks):
                unasked = block.get("type") == "tool_result" and block.get("tool_use_id") not in asked
                if unasked:
                    ids = ", ".join(
                        str(b.get("tool_use_id"))
                        for b in blocks
                        if b.get("type") == "tool_result" and b.get("tool_use_id") not in asked
                    )
                    return (
                        f"messages.{number}.content.{place}: unexpected `tool_use_id` found in"
                        f" `tool_result` blocks: {ids}. Each `tool_result` block must have a"
                        " corresponding `tool_use` block in the previous message."
                    )
        uses = [block.get("id") for block in blocks if block.get("type") == "tool_use"]
        if role == "assistant" and uses:
            after = messages[number + 1][1] if number + 1 < len(messages) else []
            leading = []  # tool results count only at the start of the next message
            for block in after:
                if block.get("type") != "tool_result":
                    break
                leading.append(block.get("tool_use_id"))
            missing = [str(id) for id in uses if id not in leading]
            if missing:
                return (
                    f"messages.{number + 1}: `tool_use` ids were found without `tool_result` blocks"
                    f" immediately after: {', '.join(missing)}. Each `tool_use` block must have a"
                    " corresponding `tool_result` block in the next message."
                )
    return None


def _chat_refusal(body: Any, *, model_required: bool = True) -> Reply | None:
    """OpenAI's checks of a chat completions body (Ollama's and Azure's endpoints share them)."""
    if not isinstance(body, dict):
        return openai_error(400, "We could not parse the JSON body of your request.")
    if model_required and not body.get("model"):
        return openai_error(400, "you must provide a model parameter")
    if "messages" not in body:
        return openai_error(
            400,
            "Missing required parameter: 'messages'.",
            param="messages",
            code="missing_required_parameter",
        )
    messages = body["messages"]
    if not isinstance(messages, list) or not messages:
        return openai_error(
            400,
            "Invalid 'messages': empty array. Expected an array with minimum length 1,"
            " but got an empty array instead.",
            param="messages",
            code="empty_array",
        )
    unanswered: list[str] = []  # tool_call ids of the last assistant message not yet answered
    answerable: set[str] = set()
    for number, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role != "tool" and unanswered:
            return _unanswered(unanswered, number)
        if role == "tool":
            call_id = message.get("tool_call_id")
            if not call_id:
                return openai_error(
                    400,
                    "Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'.",
                    param=f"messages.[{number}].tool_call_id",
                )
            if call_id not in answerable:
                return openai_error(
                    400,
                    "Invalid parameter: messages with role 'tool' must be a response to a preceeding"
                    " message with 'tool_calls'.",
                    param=f"messages.[{number}].role",
                )
            unanswered = [id for id in unanswered if id != call_id]
            continue
        answerable = set()
        if role == "assistant":
            calls = message.get("tool_calls") or []
            if message.get("content") is None and not calls:
                return openai_error(
                    400,
                    "Invalid value for 'content': expected a string, got null.",
                    param=f"messages.[{number}].content",
                )
            unanswered = [str(call.get("id")) for call in calls if isinstance(call, dict)]
            answerable = set(unanswered)
    if unanswered:
        return _unanswered(unanswered, len(messages))
    return None


def _unanswered(ids: list[str], number: int) -> Reply:
    return openai_error(
        400,
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each"
        f" 'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(ids)}",
        param=f"messages.[{number}].role",
    )


# Building blocks -------------------------------------------------------------------------------


def sse(event: str | None, data: Any) -> bytes:
    """One server-sent event; ``data`` is JSON-encoded unless it is already a str."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
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
        content, content_type = json.dumps(body, ensure_ascii=False).encode(), "application/json"
    return Reply(status, (content,), {"content-type": content_type, **(headers or {})})


def raw(
    status: int, body: bytes, content_type: str = "text/event-stream", headers: dict[str, str] | None = None
) -> Reply:
    """Exactly these bytes, in two chunks, on any endpoint: for garbage and framing tests."""
    return Reply(status, _halves([body]), {"content-type": content_type, **(headers or {})})


def recorded(path: Path, *, chunk_size: int = 61) -> Reply:
    """A recorded stream's file served byte for byte, on any endpoint.

    The bytes go out in ``chunk_size`` pieces, cutting lines and multi-byte characters apart, as
    a network may; nothing is added, so a file lacking its last blank line is sent without it.
    """
    body = path.read_bytes()
    chunks = tuple(body[start : start + chunk_size] for start in range(0, len(body), chunk_size))
    return Reply(200, chunks, dict(EVENT_STREAM), pause=0.0)


# Anthropic Messages ----------------------------------------------------------------------------


def anthropic_events(events: list[dict[str, Any]], *, headers: dict[str, str] | None = None) -> Reply:
    """A stream of Anthropic events, each named by its "type", exactly as given."""
    body = [sse(event.get("type"), event) for event in events]
    return Reply(200, _halves(body), {**EVENT_STREAM, **(headers or {})}, protocol="messages")


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
    return Reply(200, _halves(body), {**EVENT_STREAM, **(headers or {})}, protocol="chat")


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
    param: str | None = None,
    code: str | None = None,
    headers: dict[str, str] | None = None,
) -> Reply:
    """OpenAI's error body, e.g. ``openai_error(404, "no such model", code="model_not_found")``."""
    detail = {"message": message, "type": type, "param": param, "code": code}
    return error(status, {"error": detail}, headers)


def azure_error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Reply:
    """Azure OpenAI's error body: ``{"error": {"code": "401", "message": "..."}}``."""
    return error(status, {"error": {"code": code, "message": message}}, headers)


def azure_text(text: str | list[str], *, model: str = "gpt-4o-2024-08-06") -> Reply:
    """An answer of text only as Azure streams it: a first chunk without choices carrying the
    prompt's content-filter results, then OpenAI's chunks with each choice's filter results."""
    safe = {"filtered": False, "severity": "safe"}
    filters = {name: safe for name in ("hate", "self_harm", "sexual", "violence")}
    prompt = {
        "choices": [],
        "created": 0,
        "id": "",
        "model": "",
        "object": "",
        "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": filters}],
    }
    chunks = [openai_chunk({"role": "assistant", "content": ""}, model=model)]
    chunks += [openai_chunk({"content": word}, model=model) for word in _words(text)]
    for chunk in chunks:
        chunk["choices"][0]["content_filter_results"] = filters
    chunks += [openai_chunk({}, "stop", model), _openai_usage(model, 12, 7)]
    return openai_chunks([prompt, *chunks])


def _openai_envelope(model: str) -> dict[str, Any]:
    return {"id": "chatcmpl-01", "object": "chat.completion.chunk", "created": 1700000000, "model": model}


def _openai_usage(model: str, prompt_tokens: int, completion_tokens: int) -> dict[str, Any]:
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    return {**_openai_envelope(model), "choices": [], "usage": usage}
