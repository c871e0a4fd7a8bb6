"""OpenAIProvider against a local server speaking the Chat Completions streaming format."""

from collections.abc import Iterator

import pytest

from analyst.turns.agent.providers import (
    AuthenticationFailed,
    BadRequest,
    ChatMessage,
    Finished,
    ImagePart,
    MalformedStream,
    OpenAIProvider,
    ProviderUnavailable,
    StreamEvent,
    TextDelta,
    TextPart,
    ToolCall,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    UnknownModel,
)
from tests.fakes.loopback import loopback_client
from tests.fakes.model_server import (
    ScriptedModelServer,
    error,
    openai_chunk,
    openai_chunks,
    openai_error,
    openai_text,
    openai_tool_call,
    raw,
)
from tests.turns.agent.asking import HELLO

RUN_PYTHON = ToolSpec("run_python", "Run Python in a persistent kernel.", {"type": "object"})


@pytest.fixture
def provider(server: ScriptedModelServer) -> Iterator[OpenAIProvider]:
    # OpenAI's own API (the default base URL), its requests delivered to the local server.
    with loopback_client(server.url) as http:
        with OpenAIProvider("sk-test", http=http, sleep=lambda _: None) as provider:
            yield provider


def run(provider: OpenAIProvider, messages: list[ChatMessage] = HELLO, **kwargs) -> list[StreamEvent]:
    options = {"model": "gpt-test", "system": "", "tools": [RUN_PYTHON], "max_tokens": 1024, **kwargs}
    return list(provider.stream(messages=messages, **options))


def test_text_arrives_as_deltas_in_order_with_usage(server, provider):
    server.script(openai_text(["Hel", "lo, ", "world"], prompt_tokens=30, completion_tokens=3))
    assert run(provider) == [
        TextDelta("Hel"),
        TextDelta("lo, "),
        TextDelta("world"),
        Finished("end_turn", 30, 3),
    ]


def test_a_tool_call_split_across_deltas_is_assembled(server, provider):
    server.script(openai_tool_call("run_python", {"code": "df.describe()"}, call_id="call_7", pieces=6))
    assert run(provider) == [
        ToolCall("call_7", "run_python", {"code": "df.describe()"}, '{"code": "df.describe()"}'),
        Finished("tool_use", 12, 7),
    ]


def test_text_then_a_tool_call_in_one_answer(server, provider):
    server.script(openai_tool_call("run_python", {"code": "1 + 1"}, text_before="Computing now."))
    events = run(provider)
    assert events[:2] == [TextDelta("Computing"), TextDelta(" now.")]
    assert isinstance(events[2], ToolCall) and events[2].arguments == {"code": "1 + 1"}
    assert events[3] == Finished("tool_use", 12, 7)


def test_parallel_tool_calls_are_kept_apart_by_index(server, provider):
    def call(index: int, **fields) -> dict:
        return openai_chunk({"tool_calls": [{"index": index, **fields}]})

    server.script(
        openai_chunks(
            [
                call(0, id="call_a", type="function", function={"name": "run_python", "arguments": ""}),
                call(1, id="call_b", type="function", function={"name": "run_python", "arguments": '{"co'}),
                call(0, function={"arguments": '{"code": "a"}'}),
                call(1, function={"arguments": 'de": "b"}'}),
                openai_chunk({}, "tool_calls"),
            ]
        )
    )
    assert run(provider) == [
        ToolCall("call_a", "run_python", {"code": "a"}, '{"code": "a"}'),
        ToolCall("call_b", "run_python", {"code": "b"}, '{"code": "b"}'),
        Finished("tool_use", None, None),
    ]


def test_tool_calls_without_an_index_from_compatible_servers(server, provider):
    whole = {"id": "call_x", "function": {"name": "run_python", "arguments": '{"code": "1"}'}}
    server.script(openai_chunks([openai_chunk({"tool_calls": [whole]}), openai_chunk({}, "stop")]))
    assert run(provider) == [
        ToolCall("call_x", "run_python", {"code": "1"}, '{"code": "1"}'),
        Finished("tool_use", None, None),
    ]


@pytest.mark.parametrize("raw_arguments", ['{"code": ', '"print(1)"'])
def test_tool_arguments_that_are_not_a_json_object_come_with_an_error(server, provider, raw_arguments):
    server.script(openai_tool_call("run_python", raw_arguments))
    call = run(provider)[0]
    assert isinstance(call, ToolCall)
    assert call.arguments is None and call.raw_arguments == raw_arguments
    assert call.error and "run_python" in call.error


def test_request_shape_system_tools_images_tool_calls_and_results(server, provider):
    server.script(openai_text("ok"))
    messages = [
        ChatMessage("user", [TextPart("Plot it"), ImagePart("image/png", "iVBORw0KGgo=")]),
        ChatMessage(
            "assistant", [TextPart("Sure."), ToolCallPart("call_1", "run_python", {"code": "plot()"})]
        ),
        ChatMessage(
            "user",
            [
                ToolResultPart(
                    "call_1", [TextPart("Traceback ..."), ImagePart("image/png", "AAAA")], is_error=True
                )
            ],
        ),
        ChatMessage("assistant", [ToolCallPart("call_2", "run_python", {"code": "1"})]),
        ChatMessage("user", [ToolResultPart("call_2", [TextPart("1")])]),
    ]
    run(provider, messages, model="gpt-4.1", system="You are an analyst.", max_tokens=2048)

    request = server.requests[0]
    assert request.method == "POST" and request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.json == {
        "model": "gpt-4.1",
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_completion_tokens": 2048,
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "run_python",
                    "description": "Run Python in a persistent kernel.",
                    "parameters": {"type": "object"},
                },
            }
        ],
        "messages": [
            {"role": "system", "content": "You are an analyst."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Plot it"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
                ],
            },
            {
                "role": "assistant",
                "content": "Sure.",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "run_python", "arguments": '{"code": "plot()"}'},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "call_1",
                "content": "Error: Traceback ...\n[image attached in the next message]",
            },
            {
                "role": "user",
                "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}],
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_2",
                        "type": "function",
                        "function": {"name": "run_python", "arguments": '{"code": "1"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_2", "content": "1"},
        ],
    }


def test_a_model_without_images_gets_notes_instead(server):
    server.script(openai_text("ok"))
    messages = [
        ChatMessage("user", [TextPart("Look:"), ImagePart("image/png", "AAAA")]),
        ChatMessage("assistant", [ToolCallPart("call_1", "run_python", {"code": "plot()"})]),
        ChatMessage("user", [ToolResultPart("call_1", [TextPart("done"), ImagePart("image/png", "BBBB")])]),
    ]
    with OpenAIProvider(None, base_url=server.ollama_base_url, supports_images=False) as provider:
        assert provider.supports_images is False
        run(provider, messages, tools=[])
    request = server.requests[0]
    assert "authorization" not in request.headers
    assert "tools" not in request.json
    note = "[image omitted: this model does not accept images]"
    assert request.json["messages"] == [
        {"role": "user", "content": f"Look:\n{note}"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "run_python", "arguments": '{"code": "plot()"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": f"done\n{note}"},
    ]
    assert "AAAA" not in request.body.decode() and "BBBB" not in request.body.decode()


def test_a_refused_key_is_an_authentication_failure(server, provider):
    server.script(openai_error(401, "Incorrect API key provided: sk-test.", code="invalid_api_key"))
    with pytest.raises(AuthenticationFailed, match="Incorrect API key"):
        run(provider)
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "reply",
    [
        openai_error(404, "The model `gpt-nope` does not exist", code="model_not_found"),
        openai_error(400, "The model `gpt-nope` does not exist", code="model_not_found"),
        error(404, {"error": "model 'gpt-nope' not found, try pulling it first"}),
    ],
    ids=["openai-404", "model_not_found-code", "ollama-string-error"],
)
def test_an_unknown_model(server, provider, reply):
    server.script(reply)
    with pytest.raises(UnknownModel, match="gpt-nope"):
        run(provider, model="gpt-nope")


def test_an_invalid_request_carries_the_providers_message(server, provider):
    server.script(openai_error(400, "Invalid 'messages[1].content': string too long."))
    with pytest.raises(BadRequest, match="string too long"):
        run(provider)
    assert len(server.requests) == 1


def test_an_error_chunk_mid_stream(server, provider):
    chunks = [
        openai_chunk({"content": "Par"}),
        {"error": {"message": "The server had an error processing your request.", "type": "server_error"}},
    ]
    server.script(openai_chunks(chunks, done=False))
    received = []
    with pytest.raises(ProviderUnavailable, match="server had an error"):
        received.extend(provider.stream(model="m", system="", messages=HELLO, tools=[], max_tokens=10))
    assert received == [TextDelta("Par")]
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (raw(200, b"\x00\xff garbage without any framing \x89PNG"), "without a finish_reason"),
        (raw(200, b'data: {"choices": [{"delta": {"content": "Hi"}\n\n'), "not JSON"),
        (raw(200, b"data: [1, 2]\n\n"), "not an object"),
        (raw(200, b'data: {"choices": [{"delta": "Hi"}]}\n\n'), "unexpected chunk"),
        (openai_chunks([openai_chunk({"content": "Hi"})], done=False), "without a finish_reason"),
        (openai_chunks([openai_chunk({"content": "Hi"})]), "without a finish_reason"),
        (raw(200, b"<html>Bad gateway</html>", content_type="text/html"), "text/event-stream"),
    ],
    ids=["garbage", "invalid-json", "not-an-object", "bad-delta", "truncated", "done-without-finish", "html"],
)
def test_a_malformed_stream(server, provider, reply, message):
    server.script(reply)
    with pytest.raises(MalformedStream, match=message):
        run(provider)


def test_a_finished_answer_without_done_still_finishes(server, provider):
    server.script(openai_chunks([openai_chunk({"content": "Hi"}), openai_chunk({}, "length")], done=False))
    assert run(provider) == [TextDelta("Hi"), Finished("max_tokens", None, None)]
