"""AnthropicProvider against a local server speaking the Messages API's streaming format."""

import json
import time
from collections.abc import Iterator

import pytest

from analyst.turns.agent.providers import (
    AnthropicProvider,
    AuthenticationFailed,
    BadRequest,
    ChatMessage,
    Finished,
    ImagePart,
    MalformedStream,
    MissingApiKey,
    ProviderUnavailable,
    RateLimited,
    StreamEvent,
    TextDelta,
    TextPart,
    ToolCall,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    UnknownModel,
)
from tests.fakes.model_server import (
    ScriptedModelServer,
    anthropic_error,
    anthropic_events,
    anthropic_text,
    anthropic_tool_call,
    raw,
)
from tests.turns.agent.asking import HELLO

RUN_PYTHON = ToolSpec("run_python", "Run Python in a persistent kernel.", {"type": "object"})


@pytest.fixture
def provider(server: ScriptedModelServer) -> Iterator[AnthropicProvider]:
    with AnthropicProvider("sk-test", base_url=server.url, sleep=lambda _: None) as provider:
        yield provider


def run(provider: AnthropicProvider, messages: list[ChatMessage] = HELLO, **kwargs) -> list[StreamEvent]:
    options = {"model": "claude-test", "system": "", "tools": [RUN_PYTHON], "max_tokens": 1024, **kwargs}
    return list(provider.stream(messages=messages, **options))


def test_text_arrives_as_deltas_in_order(server, provider):
    server.script(anthropic_text(["Hel", "lo, ", "world", "!"], input_tokens=21, output_tokens=4))
    assert run(provider) == [
        TextDelta("Hel"),
        TextDelta("lo, "),
        TextDelta("world"),
        TextDelta("!"),
        Finished("end_turn", 21, 4),
    ]


def test_deltas_are_yielded_while_the_answer_still_streams(server, provider):
    server.script(anthropic_text(["first"] + [" more"] * 10).paced(0.02))  # 34 chunks: ~0.7 s
    started = time.monotonic()
    stream = provider.stream(model="m", system="", messages=HELLO, tools=[], max_tokens=10)
    assert next(stream) == TextDelta("first")
    first = time.monotonic() - started
    assert list(stream)[-1] == Finished("end_turn", 12, 7)
    assert first < 0.4 < time.monotonic() - started


def test_a_tool_call_split_across_deltas_is_assembled(server, provider):
    code = 'import pandas as pd\nprint("héllo")'
    server.script(anthropic_tool_call("run_python", {"code": code}, tool_id="toolu_9", pieces=5))
    events = run(provider)
    assert events == [
        ToolCall("toolu_9", "run_python", {"code": code}, f'{{"code": {json.dumps(code)}}}'),
        Finished("tool_use", 12, 7),
    ]


def test_text_then_a_tool_call_in_one_answer(server, provider):
    server.script(anthropic_tool_call("run_python", {"code": "df.head()"}, text_before="Let me look."))
    events = run(provider)
    assert [type(e) for e in events] == [TextDelta, TextDelta, TextDelta, ToolCall, Finished]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Let me look."
    assert events[3].arguments == {"code": "df.head()"}


def test_request_shape_headers_system_tools_images_and_tool_results(server, provider):
    server.script(anthropic_text("ok"))
    messages = [
        ChatMessage("user", [TextPart("Plot it"), ImagePart("image/png", "iVBORw0KGgo=")]),
        ChatMessage(
            "assistant", [TextPart("Sure."), ToolCallPart("toolu_1", "run_python", {"code": "plot()"})]
        ),
        ChatMessage(
            "user",
            [
                TextPart(""),
                ToolResultPart(
                    "toolu_1", [TextPart("Traceback ..."), ImagePart("image/png", "AAAA")], is_error=True
                ),
            ],
        ),
    ]
    run(provider, messages, model="claude-sonnet-4-5", system="You are an analyst.", max_tokens=2048)

    request = server.requests[0]
    assert request.method == "POST" and request.path == "/v1/messages"
    assert request.headers["x-api-key"] == "sk-test"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.headers["content-type"] == "application/json"
    assert request.json == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 2048,
        "stream": True,
        "system": "You are an analyst.",
        "tools": [
            {
                "name": "run_python",
                "description": "Run Python in a persistent kernel.",
                "input_schema": {"type": "object"},
            }
        ],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Plot it"},
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
                    },
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Sure."},
                    {"type": "tool_use", "id": "toolu_1", "name": "run_python", "input": {"code": "plot()"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "is_error": True,
                        "content": [
                            {"type": "text", "text": "Traceback ..."},
                            {
                                "type": "image",
                                "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"},
                            },
                        ],
                    }
                ],
            },
        ],
    }


def test_no_system_and_no_tools_are_left_out(server, provider):
    server.script(anthropic_text("ok"))
    run(provider, tools=[])
    assert "system" not in server.requests[0].json and "tools" not in server.requests[0].json


def test_tool_results_go_before_text_in_a_user_message(server, provider):
    server.script(anthropic_text("ok"))
    messages = [
        *HELLO,
        ChatMessage("assistant", [ToolCallPart("toolu_1", "run_python", {"code": "2 + 2"})]),
        ChatMessage("user", [TextPart("note"), ToolResultPart("toolu_1", [TextPart("4")])]),
    ]
    run(provider, messages)
    assert [b["type"] for b in server.requests[0].json["messages"][2]["content"]] == ["tool_result", "text"]


@pytest.mark.parametrize("raw_arguments", ['{"code": "print(1)"', '["print(1)"]'])
def test_tool_arguments_that_are_not_a_json_object_come_with_an_error(server, provider, raw_arguments):
    server.script(anthropic_tool_call("run_python", raw_arguments))
    call = run(provider)[0]
    assert isinstance(call, ToolCall)
    assert call.arguments is None and call.raw_arguments == raw_arguments
    assert call.error and "run_python" in call.error


def test_a_tool_call_without_input_deltas_has_empty_arguments(server, provider):
    events = [
        {"type": "message_start", "message": {"usage": {"input_tokens": 3}}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "t", "name": "list_files", "input": {}},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 2}},
        {"type": "message_stop"},
    ]
    server.script(anthropic_events(events))
    assert run(provider) == [ToolCall("t", "list_files", {}, ""), Finished("tool_use", 3, 2)]


def test_unknown_blocks_and_events_are_skipped(server, provider):
    events = [
        {"type": "message_start", "message": {"usage": {"input_tokens": 3}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "hmm"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "some_future_event"},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "4"}},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]
    server.script(anthropic_events(events))
    assert run(provider) == [TextDelta("4"), Finished("end_turn", 3, 9)]


def test_missing_key_names_the_environment_variable():
    with pytest.raises(MissingApiKey, match="ANTHROPIC_API_KEY") as caught:
        AnthropicProvider("")
    assert caught.value.code == "missing_api_key" and not caught.value.retryable


def test_a_refused_key_is_an_authentication_failure_and_not_retried(server, provider):
    server.script(anthropic_error(401, "authentication_error", "invalid x-api-key"))
    with pytest.raises(AuthenticationFailed, match="invalid x-api-key"):
        run(provider)
    assert len(server.requests) == 1


def test_an_unknown_model(server, provider):
    server.script(anthropic_error(404, "not_found_error", "model: claude-nope"))
    with pytest.raises(UnknownModel, match="claude-nope") as caught:
        run(provider, model="claude-nope")
    assert caught.value.code == "unknown_model"


def test_an_invalid_request_carries_the_providers_message(server, provider):
    server.script(anthropic_error(400, "invalid_request_error", "max_tokens: must be at most 64000"))
    with pytest.raises(BadRequest, match="must be at most 64000"):
        run(provider, max_tokens=10**6)
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("kind", "error"),
    [
        ("overloaded_error", ProviderUnavailable),
        ("api_error", ProviderUnavailable),
        ("rate_limit_error", RateLimited),
        ("invalid_request_error", BadRequest),
    ],
)
def test_an_error_event_mid_stream_raises_its_error_after_the_text_so_far(server, provider, kind, error):
    events = [
        {"type": "message_start", "message": {"usage": {"input_tokens": 3}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Part"}},
        {"type": "error", "error": {"type": kind, "message": "something went wrong"}},
    ]
    server.script(anthropic_events(events))
    received = []
    with pytest.raises(error, match="something went wrong"):
        received.extend(provider.stream(model="m", system="", messages=HELLO, tools=[], max_tokens=10))
    assert received == [TextDelta("Part")]
    assert len(server.requests) == 1  # a started answer is never replayed


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"\x00\xff\xfe garbage \x89PNG\r\n\x1a\n", "ended before message_stop"),
        (b'event: message_start\ndata: {"type": "message_start", "message": {}\n\n', "not JSON"),
        (b'event: message_start\ndata: ["not", "an", "object"]\n\n', "not an object"),
        (
            b'event: message_start\ndata: {"type": "message_start", "message": {"usage": {}}}\n\n'
            b'event: content_block_start\ndata: {"type": "content_block_start", "index": 0, '
            b'"content_block": {"type": "text", "text": ""}}\n\n'
            b'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, '
            b'"delta": {"type": "text_delta", "text": "Hi"}}\n\n',
            "ended before message_stop",
        ),
        (
            b'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, '
            b'"delta": {"type": "text_delta", "text": "Hi"}}\n\n',
            "before message_start",
        ),
        (
            b'event: message_start\ndata: {"type": "message_start", "message": {"usage": {}}}\n\n'
            b'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 3, '
            b'"delta": {"type": "text_delta", "text": "Hi"}}\n\n',
            "block 3 is not open",
        ),
        (
            b'event: message_start\ndata: {"type": "message_start", "message": {"usage": {}}}\n\n'
            b'event: message_stop\ndata: {"type": "message_stop"}\n\n',
            "without a stop_reason",
        ),
        (
            b'event: message_start\ndata: {"type": "message_start", "message": {"usage": {}}}\n\n'
            b'event: content_block_start\ndata: {"type": "content_block_start", "index": 0}\n\n',
            "unexpected content_block_start",
        ),
    ],
    ids=[
        "garbage",
        "invalid-json",
        "not-an-object",
        "truncated",
        "out-of-order",
        "unknown-block",
        "no-stop-reason",
        "missing-field",
    ],
)
def test_a_malformed_stream(server, provider, body, message):
    server.script(raw(200, body))
    with pytest.raises(MalformedStream, match=message) as caught:
        run(provider)
    assert caught.value.code == "malformed_stream"


def test_a_json_answer_instead_of_a_stream_is_malformed(server, provider):
    server.script(raw(200, b'{"type": "message", "content": []}', content_type="application/json"))
    with pytest.raises(MalformedStream, match="text/event-stream"):
        run(provider)
