"""The fake model server refuses what the real APIs refuse, with their statuses and error bodies.

Each rule has a request the fake must refuse, leaving the scripted reply queued, and a request
that differs only in the point the rule checks, which it must answer. Where the real API's
answer was recorded, the request and the error are the recorded ones: anthropic-sdk-python
(commit 009b035305e0724ce108ebd796935f91711fc6e1) keeps, in
tests/lib/tools/__inline_snapshot__/test_runners/TestSyncRunTools/f59a9391-643b-422c-96dc-1f28bc7ea4d7.json,
the API's 400 for a tool_result sent with no tool_use before it.
"""

import json
from typing import Any

import httpx
import pytest

from tests.fakes.model_server import (
    OPENAI_NO_KEY,
    ScriptedModelServer,
    anthropic_text,
    openai_text,
    sse,
)

KEYS = {"x-api-key": "test-anthropic-key", "anthropic-version": "2023-06-01"}
BEARER = {"authorization": "Bearer test-openai-key"}
HELLO = [{"role": "user", "content": "hello"}]
TOOL_USE = {"type": "tool_use", "id": "toolu_01", "name": "run_python", "input": {"code": "1 + 1"}}
TOOL_RESULT = {"type": "tool_result", "tool_use_id": "toolu_01", "content": "2"}
CALL = {"id": "call_01", "type": "function", "function": {"name": "run_python", "arguments": "{}"}}
CALL_2 = {**CALL, "id": "call_02"}
STRAY_TOOL = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding"
    " message with 'tool_calls'."
)


def anthropic_body(messages: list[dict[str, Any]] = HELLO, **fields: Any) -> dict[str, Any]:
    return {"model": "claude-test", "max_tokens": 64, "stream": True, "messages": messages, **fields}


def chat_body(messages: list[dict[str, Any]] = HELLO, **fields: Any) -> dict[str, Any]:
    return {"model": "gpt-test", "stream": True, "messages": messages, **fields}


def post(server: ScriptedModelServer, path: str, body: Any, headers: dict[str, str]) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(server.url + path, content=content, headers=headers)


def anthropic_refusal(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def openai_refusal(message: str, param: str | None = None, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}


def assert_refused_then_answered(
    server: ScriptedModelServer,
    refused: httpx.Response,
    status: int,
    body: dict[str, Any] | str,
    answered: httpx.Response,
) -> None:
    """``refused`` got this error without taking the reply, which ``answered`` then got."""
    assert refused.status_code == status
    assert (refused.text if isinstance(body, str) else refused.json()) == body
    assert answered.status_code == 200, answered.text
    assert answered.headers["content-type"].startswith("text/event-stream")


# Raw UTF-8 on the wire


def test_sse_sends_non_ascii_as_raw_utf8_never_as_escapes():
    event = sse("content_block_delta", {"text": "café ∑ 日本 \u2028 😀"})
    assert "café ∑ 日本 \u2028 😀".encode() in event
    assert b"\\u" not in event


def test_streamed_text_arrives_as_raw_utf8(server):
    server.script(anthropic_text("naïve café"), openai_text("naïve café"))
    anthropic = post(server, "/v1/messages", anthropic_body(), KEYS)
    openai = post(server, "/v1/chat/completions", chat_body(), BEARER)
    for response in (anthropic, openai):
        assert "naïve".encode() in response.content and b"\\u00ef" not in response.content


# Anthropic: headers and required fields


def test_anthropic_needs_an_api_key(server):
    server.script(anthropic_text("ok"))
    refused = post(server, "/v1/messages", anthropic_body(), {"anthropic-version": "2023-06-01"})
    error = anthropic_refusal("authentication_error", "x-api-key header is required")
    assert_refused_then_answered(
        server, refused, 401, error, post(server, "/v1/messages", anthropic_body(), KEYS)
    )


def test_anthropic_needs_its_version_header(server):
    server.script(anthropic_text("ok"))
    refused = post(server, "/v1/messages", anthropic_body(), {"x-api-key": "k"})
    error = anthropic_refusal("invalid_request_error", "anthropic-version: header is required")
    assert_refused_then_answered(
        server, refused, 400, error, post(server, "/v1/messages", anthropic_body(), KEYS)
    )


@pytest.mark.parametrize("missing", ["model", "max_tokens", "messages"])
def test_anthropic_needs_model_max_tokens_and_messages(server, missing):
    server.script(anthropic_text("ok"))
    body = anthropic_body()
    del body[missing]
    refused = post(server, "/v1/messages", body, KEYS)
    error = anthropic_refusal("invalid_request_error", f"{missing}: Field required")
    assert_refused_then_answered(
        server, refused, 400, error, post(server, "/v1/messages", anthropic_body(), KEYS)
    )


def test_anthropic_needs_each_message_to_have_content(server):
    server.script(anthropic_text("ok"))
    refused = post(server, "/v1/messages", anthropic_body([{"role": "user"}]), KEYS)
    error = anthropic_refusal("invalid_request_error", "messages.0.content: Field required")
    assert_refused_then_answered(
        server, refused, 400, error, post(server, "/v1/messages", anthropic_body(), KEYS)
    )


def test_an_unknown_anthropic_path_is_not_found(server):
    server.script(anthropic_text("ok"))
    refused = post(server, "/v1/v1/messages", anthropic_body(), KEYS)
    error = anthropic_refusal("not_found_error", "Not Found")
    assert_refused_then_answered(
        server, refused, 404, error, post(server, "/v1/messages", anthropic_body(), KEYS)
    )


# Anthropic: the conversation


def test_anthropic_wants_the_first_message_from_the_user(server):
    server.script(anthropic_text("ok"))
    refused = post(
        server, "/v1/messages", anthropic_body([{"role": "assistant", "content": "Hi"}, *HELLO]), KEYS
    )
    error = anthropic_refusal("invalid_request_error", 'messages: first message must use the "user" role')
    answered = post(
        server, "/v1/messages", anthropic_body([*HELLO, {"role": "assistant", "content": "Hi"}]), KEYS
    )
    assert_refused_then_answered(server, refused, 400, error, answered)


@pytest.mark.parametrize(
    ("messages", "number"),
    [
        ([{"role": "user", "content": ""}], 0),
        ([{"role": "user", "content": []}], 0),
        ([*HELLO, {"role": "assistant", "content": []}, *HELLO], 1),
    ],
    ids=["empty-string", "empty-list", "assistant-mid-conversation"],
)
def test_anthropic_refuses_empty_content(server, messages, number):
    server.script(anthropic_text("ok"))
    refused = post(server, "/v1/messages", anthropic_body(messages), KEYS)
    message = (
        f"messages.{number}: all messages must have non-empty content except for the optional final"
        " assistant message"
    )
    error = anthropic_refusal("invalid_request_error", message)
    # The final assistant message (a prefill) may be empty.
    answered = post(
        server, "/v1/messages", anthropic_body([*HELLO, {"role": "assistant", "content": ""}]), KEYS
    )
    assert_refused_then_answered(server, refused, 400, error, answered)


def test_anthropic_refuses_an_empty_text_block(server):
    server.script(anthropic_text("ok"))
    blocks = [{"type": "text", "text": "hello"}, {"type": "text", "text": ""}]
    refused = post(server, "/v1/messages", anthropic_body([{"role": "user", "content": blocks}]), KEYS)
    error = anthropic_refusal("invalid_request_error", "messages: text content blocks must be non-empty")
    answered = post(server, "/v1/messages", anthropic_body([{"role": "user", "content": blocks[:1]}]), KEYS)
    assert_refused_then_answered(server, refused, 400, error, answered)


def test_anthropic_refuses_a_message_whose_text_is_all_whitespace(server):
    server.script(anthropic_text("ok"))
    refused = post(
        server,
        "/v1/messages",
        anthropic_body([{"role": "user", "content": [{"type": "text", "text": " \n"}]}]),
        KEYS,
    )
    error = anthropic_refusal(
        "invalid_request_error", "messages: text content blocks must contain non-whitespace text"
    )
    # Beside other text, a whitespace block is taken.
    blocks = [{"type": "text", "text": " \n"}, {"type": "text", "text": "hello"}]
    answered = post(server, "/v1/messages", anthropic_body([{"role": "user", "content": blocks}]), KEYS)
    assert_refused_then_answered(server, refused, 400, error, answered)


def test_anthropic_refuses_a_tool_result_without_its_tool_use_as_recorded(server):
    # The recorded request (anthropic-sdk-python, f59a9391...json): two user messages in a row,
    # the second answering a tool_use the conversation never held. The API merged the two before
    # it checked, hence "messages.0.content.1".
    server.script(anthropic_text("ok"))
    result = {
        "tool_use_id": "toolu_01GHndag5wQmbzNihYmV2UBj",
        "content": "The weather in San Francisco, CA is currently sunny with a temperature of 20°C.",
        "type": "tool_result",
    }
    recorded = [
        {"role": "user", "content": "What's the weather in SF in Celsius?"},
        {"role": "user", "content": [result]},
    ]
    refused = post(server, "/v1/messages", anthropic_body(recorded, model="claude-haiku-4-5"), KEYS)
    message = (
        "messages.0.content.1: unexpected `tool_use_id` found in `tool_result` blocks:"
        " toolu_01GHndag5wQmbzNihYmV2UBj. Each `tool_result` block must have a corresponding"
        " `tool_use` block in the previous message."
    )
    error = anthropic_refusal("invalid_request_error", message)
    use = {"type": "tool_use", "id": result["tool_use_id"], "name": "get_weather", "input": {}}
    answered_conversation = [recorded[0], {"role": "assistant", "content": [use]}, recorded[1]]
    answered = post(server, "/v1/messages", anthropic_body(answered_conversation), KEYS)
    assert_refused_then_answered(server, refused, 400, error, answered)


def test_anthropic_refuses_a_tool_result_answering_an_id_it_was_not_asked(server):
    server.script(anthropic_text("ok"))
    stray = {**TOOL_RESULT, "tool_use_id": "toolu_99"}
    conversation = [
        *HELLO,
        {"role": "assistant", "content": [TOOL_USE]},
        {"role": "user", "content": [TOOL_RESULT, stray]},
    ]
    refused = post(server, "/v1/messages", anthropic_body(conversation), KEYS)
    message = (
        "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_99."
        " Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
    )
    error = anthropic_refusal("invalid_request_error", message)
    conversation[2] = {"role": "user", "content": [TOOL_RESULT]}
    answered = post(server, "/v1/messages", anthropic_body(conversation), KEYS)
    assert_refused_then_answered(server, refused, 400, error, answered)


@pytest.mark.parametrize(
    "after",
    [
        [{"role": "user", "content": "and now?"}],
        [{"role": "user", "content": [{"type": "text", "text": "first"}, TOOL_RESULT]}],
        [],
    ],
    ids=["no-result", "result-after-text", "nothing-after"],
)
def test_anthropic_refuses_a_tool_use_not_answered_at_the_start_of_the_next_message(server, after):
    server.script(anthropic_text("ok"))
    conversation = [*HELLO, {"role": "assistant", "content": [TOOL_USE]}, *after]
    refused = post(server, "/v1/messages", anthropic_body(conversation), KEYS)
    message = (
        "messages.2: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01."
        " Each `tool_use` block must have a corresponding `tool_result` block in the next message."
    )
    error = anthropic_refusal("invalid_request_error", message)
    answered_conversation = [
        *HELLO,
        {"role": "assistant", "content": [TOOL_USE]},
        {"role": "user", "content": [TOOL_RESULT, {"type": "text", "text": "then text"}]},
    ]
    answered = post(server, "/v1/messages", anthropic_body(answered_conversation), KEYS)
    assert_refused_then_answered(server, refused, 400, error, answered)


def test_anthropic_merges_messages_of_one_role_in_a_row_before_checking_tool_use(server):
    # The API joins consecutive same-role turns (the recorded error above counts them merged):
    # a tool_use answered by the first of two user messages in a row is answered.
    server.script(anthropic_text("ok"), anthropic_text("ok"))
    conversation = [
        *HELLO,
        *HELLO,
        {"role": "assistant", "content": "Let me look."},
        {"role": "assistant", "content": [TOOL_USE]},
        {"role": "user", "content": [TOOL_RESULT]},
        {"role": "user", "content": "thanks"},
    ]
    assert post(server, "/v1/messages", anthropic_body(conversation), KEYS).status_code == 200
    # Merged, "wait" leads the message after the tool_use, so its result no longer comes first.
    late = [
        *HELLO,
        {"role": "assistant", "content": [TOOL_USE]},
        {"role": "user", "content": "wait"},
        conversation[4],
    ]
    refused = post(server, "/v1/messages", anthropic_body(late), KEYS)
    message = (
        "messages.2: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01."
        " Each `tool_use` block must have a corresponding `tool_result` block in the next message."
    )
    error = anthropic_refusal("invalid_request_error", message)
    answered = post(server, "/v1/messages", anthropic_body(conversation), KEYS)
    assert_refused_then_answered(server, refused, 400, error, answered)


# OpenAI: key, fields, path


def test_openai_needs_a_bearer_key(server):
    server.script(openai_text("ok"))
    for headers in ({}, {"authorization": "Basic dXNlcjprZXk="}, {"authorization": "Bearer"}):
        refused = post(server, "/v1/chat/completions", chat_body(), headers)
        assert refused.status_code == 401
        assert refused.json() == openai_refusal(OPENAI_NO_KEY)
    assert OPENAI_NO_KEY.startswith("You didn't provide an API key.")
    answered = post(server, "/v1/chat/completions", chat_body(), BEARER)
    assert_refused_then_answered(server, refused, 401, openai_refusal(OPENAI_NO_KEY), answered)


def test_openai_needs_a_model(server):
    server.script(openai_text("ok"))
    body = chat_body()
    del body["model"]
    refused = post(server, "/v1/chat/completions", body, BEARER)
    error = openai_refusal("you must provide a model parameter")
    assert_refused_then_answered(
        server, refused, 400, error, post(server, "/v1/chat/completions", chat_body(), BEARER)
    )


def test_openai_needs_messages(server):
    server.script(openai_text("ok"))
    body = chat_body()
    del body["messages"]
    refused = post(server, "/v1/chat/completions", body, BEARER)
    error = openai_refusal(
        "Missing required parameter: 'messages'.", "messages", "missing_required_parameter"
    )
    assert_refused_then_answered(
        server, refused, 400, error, post(server, "/v1/chat/completions", chat_body(), BEARER)
    )


def test_an_unknown_openai_path_is_an_invalid_url(server):
    server.script(openai_text("ok"))
    refused = post(server, "/v1/v1/chat/completions", chat_body(), BEARER)
    error = openai_refusal("Invalid URL (POST /v1/v1/chat/completions)")
    assert_refused_then_answered(
        server, refused, 404, error, post(server, "/v1/chat/completions", chat_body(), BEARER)
    )


# OpenAI: the conversation


def test_openai_refuses_an_assistant_message_with_neither_content_nor_tool_calls(server):
    server.script(openai_text("ok"))
    conversation = [*HELLO, {"role": "assistant", "content": None}, *HELLO]
    refused = post(server, "/v1/chat/completions", chat_body(conversation), BEARER)
    error = openai_refusal(
        "Invalid value for 'content': expected a string, got null.", "messages.[1].content"
    )
    conversation[1] = {"role": "assistant", "content": ""}  # an empty string is content
    answered = post(server, "/v1/chat/completions", chat_body(conversation), BEARER)
    assert_refused_then_answered(server, refused, 400, error, answered)


@pytest.mark.parametrize(
    "before",
    [
        [],
        [{"role": "assistant", "content": "no calls"}],
        [{"role": "assistant", "content": None, "tool_calls": [CALL_2]}],
    ],
    ids=["no-assistant", "assistant-without-calls", "another-call"],
)
def test_openai_refuses_a_tool_message_answering_no_call_before_it(server, before):
    server.script(openai_text("ok"))
    tool = {"role": "tool", "tool_call_id": "call_01", "content": "2"}
    refused = post(server, "/v1/chat/completions", chat_body([*HELLO, *before, tool]), BEARER)
    message = STRAY_TOOL
    error = openai_refusal(message, f"messages.[{1 + len(before)}].role")
    calls = {"role": "assistant", "content": None, "tool_calls": [CALL]}
    answered = post(server, "/v1/chat/completions", chat_body([*HELLO, calls, tool]), BEARER)
    assert_refused_then_answered(server, refused, 400, error, answered)


@pytest.mark.parametrize(
    ("after", "param"),
    [
        ([], "messages.[2].role"),
        ([{"role": "user", "content": "and?"}], "messages.[2].role"),
        (
            [
                {"role": "tool", "tool_call_id": "call_01", "content": "2"},
                {"role": "user", "content": "and?"},
            ],
            "messages.[3].role",
        ),
    ],
    ids=["nothing-after", "user-after", "one-of-two-answered"],
)
def test_openai_refuses_tool_calls_not_each_answered_right_after(server, after, param):
    server.script(openai_text("ok"))
    calls = {"role": "assistant", "content": None, "tool_calls": [CALL, CALL_2]}
    refused = post(server, "/v1/chat/completions", chat_body([*HELLO, calls, *after]), BEARER)
    missing = "call_01, call_02" if not after or after[0]["role"] == "user" else "call_02"
    message = (
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each"
        f" 'tool_call_id'. The following tool_call_ids did not have response messages: {missing}"
    )
    answers = [
        {"role": "tool", "tool_call_id": "call_02", "content": "3"},
        {"role": "tool", "tool_call_id": "call_01", "content": "2"},
    ]
    answered = post(server, "/v1/chat/completions", chat_body([*HELLO, calls, *answers, *HELLO]), BEARER)
    assert_refused_then_answered(server, refused, 400, openai_refusal(message, param), answered)


# Ollama: its own base URL, no key, OpenAI's rules


def test_ollama_needs_no_key_and_records_which_length_field_came(server):
    server.script(openai_text("ok"), openai_text("ok"))
    assert server.ollama_base_url == server.url + "/ollama/v1"
    assert server.env()["OLLAMA_BASE_URL"] == server.ollama_base_url
    for field in ("max_tokens", "max_completion_tokens"):
        response = post(server, "/ollama/v1/chat/completions", chat_body(**{field: 10}), {})
        assert response.status_code == 200
    assert [request.api for request in server.requests] == ["ollama", "ollama"]
    assert server.requests[0].json["max_tokens"] == 10 and "max_tokens" not in server.requests[1].json


def test_ollama_checks_the_conversation_as_openai_does(server):
    server.script(openai_text("ok"))
    tool = {"role": "tool", "tool_call_id": "call_01", "content": "2"}
    refused = post(server, "/ollama/v1/chat/completions", chat_body([*HELLO, tool]), {})
    message = STRAY_TOOL
    answered = post(server, "/ollama/v1/chat/completions", chat_body(), {})
    assert_refused_then_answered(server, refused, 400, openai_refusal(message, "messages.[1].role"), answered)


def test_an_unknown_ollama_path_is_a_plain_404(server):
    server.script(openai_text("ok"))
    refused = post(server, "/ollama/chat/completions", chat_body(), {})
    assert refused.headers["content-type"].startswith("text/plain")
    answered = post(server, "/ollama/v1/chat/completions", chat_body(), {})
    assert_refused_then_answered(server, refused, 404, "404 page not found", answered)


# The script itself


def test_a_reply_for_one_api_stays_queued_when_the_other_asks(server):
    server.script(anthropic_text("ok"))
    refused = post(server, "/v1/chat/completions", chat_body(), BEARER)
    assert refused.status_code == 404 and "ScriptedModelServer" in refused.text
    assert server.pending == 1
    assert post(server, "/v1/messages", anthropic_body(), KEYS).status_code == 200


def test_a_refused_request_is_recorded(server):
    server.script(anthropic_text("ok"))
    post(server, "/v1/messages", anthropic_body(), {})
    post(server, "/v1/messages", anthropic_body(), KEYS)
    assert [request.api for request in server.requests] == ["anthropic", "anthropic"]
    assert "x-api-key" not in server.requests[0].headers
