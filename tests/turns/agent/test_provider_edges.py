"""What real streams hold beyond text and tool calls: blocks of other kinds, refusals, answers cut
off by max_tokens, several choices, and 404s that mean a wrong base URL rather than a model."""

import pytest

from analyst.turns.agent.providers import (
    AnthropicProvider,
    Finished,
    OpenAIProvider,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolSpec,
    UnknownModel,
)
from analyst.turns.agent.providers.errors import EndpointNotFound
from analyst.turns.agent.providers.router import provider_for
from tests.fakes.model_server import (
    anthropic_error,
    anthropic_events,
    error,
    openai_chunk,
    openai_chunks,
    openai_error,
)
from tests.turns.agent.asking import HELLO

RUN_PYTHON = ToolSpec("run_python", "Run Python in a persistent kernel.", {"type": "object"})


def run(provider, model: str = "m") -> list[StreamEvent]:
    with provider:
        return list(
            provider.stream(model=model, system="", messages=HELLO, tools=[RUN_PYTHON], max_tokens=64)
        )


def anthropic(server) -> AnthropicProvider:
    return AnthropicProvider("sk-test", base_url=server.url, sleep=lambda _: None)


def openai(server) -> OpenAIProvider:
    return OpenAIProvider("sk-test", base_url=server.openai_base_url, sleep=lambda _: None)


def start(input_tokens: int = 10) -> list[dict]:
    message = {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": 1},
    }
    return [{"type": "message_start", "message": message}]


def block(index: int, content_block: dict, *deltas: dict, stop: bool = True) -> list[dict]:
    events = [{"type": "content_block_start", "index": index, "content_block": content_block}]
    events += [{"type": "content_block_delta", "index": index, "delta": delta} for delta in deltas]
    return events + ([{"type": "content_block_stop", "index": index}] if stop else [])


def stop(reason: str, output_tokens: int = 5) -> list[dict]:
    delta = {"stop_reason": reason, "stop_sequence": None}
    return [
        {"type": "message_delta", "delta": delta, "usage": {"output_tokens": output_tokens}},
        {"type": "message_stop"},
    ]


def text(value: str) -> dict:
    return {"type": "text_delta", "text": value}


def json_piece(value: str) -> dict:
    return {"type": "input_json_delta", "partial_json": value}


# Anthropic: blocks that are not ours ------------------------------------------------------------


def test_server_tool_use_and_its_result_are_skipped(server):
    # A web search the API ran itself: its input arrives as input_json_delta in a server_tool_use
    # block, which used to abort the stream as malformed.
    server.script(
        anthropic_events(
            start()
            + block(
                0,
                {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {}},
                json_piece('{"query": "pandas'),
                json_piece(' 3.0"}'),
            )
            + block(1, {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "content": []})
            + block(2, {"type": "text", "text": ""}, text("Found it."))
            + stop("end_turn")
        )
    )
    assert run(anthropic(server)) == [TextDelta("Found it."), Finished("end_turn", 10, 5)]


def test_thinking_and_redacted_thinking_blocks_are_skipped(server):
    server.script(
        anthropic_events(
            start()
            + block(
                0,
                {"type": "thinking", "thinking": ""},
                {"type": "thinking_delta", "thinking": "Let me add them."},
                {"type": "signature_delta", "signature": "EqQBCgIYAhIM"},
            )
            + block(1, {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"})
            + block(2, {"type": "a_block_type_added_next_year", "x": 1}, {"type": "a_delta_of_it", "y": 2})
            + block(3, {"type": "text", "text": ""}, text("4"))
            + stop("end_turn")
        )
    )
    assert run(anthropic(server)) == [TextDelta("4"), Finished("end_turn", 10, 5)]


def test_a_refusal_stop_reason(server):
    server.script(anthropic_events(start() + stop("refusal", output_tokens=0)))
    assert run(anthropic(server)) == [Finished("refusal", 10, 0)]


def test_a_stop_sequence_is_the_end_of_the_turn(server):
    server.script(
        anthropic_events(start() + block(0, {"type": "text", "text": ""}, text("ok")) + stop("stop_sequence"))
    )
    assert run(anthropic(server))[-1] == Finished("end_turn", 10, 5)


# max_tokens inside a tool call --------------------------------------------------------------------


def test_anthropic_tool_call_cut_off_by_max_tokens_is_truncated_not_invalid(server):
    tool = {"type": "tool_use", "id": "toolu_01", "name": "run_python", "input": {}}
    server.script(
        anthropic_events(start() + block(0, tool, json_piece('{"code": "df.gro')) + stop("max_tokens"))
    )
    events = run(anthropic(server))
    assert events[-1] == Finished("max_tokens", 10, 5)
    (call,) = events[:-1]
    assert call.truncated and call.arguments is None and call.raw_arguments == '{"code": "df.gro'
    assert "cut off" in call.error


def test_anthropic_max_tokens_with_the_tool_block_still_open_is_not_malformed(server):
    tool = {"type": "tool_use", "id": "toolu_01", "name": "run_python", "input": {}}
    server.script(
        anthropic_events(
            start() + block(0, tool, json_piece('{"code": "x ='), stop=False) + stop("max_tokens")
        )
    )
    call, finished = run(anthropic(server))
    assert call.truncated and finished.stop_reason == "max_tokens"


def test_a_complete_tool_call_before_max_tokens_still_runs(server):
    tool = {"type": "tool_use", "id": "toolu_01", "name": "run_python", "input": {}}
    server.script(
        anthropic_events(start() + block(0, tool, json_piece('{"code": "1"}')) + stop("max_tokens"))
    )
    call, _ = run(anthropic(server))
    assert call == ToolCall("toolu_01", "run_python", {"code": "1"}, '{"code": "1"}')


def test_openai_tool_call_cut_off_by_length_is_truncated(server):
    opening = {
        "index": 0,
        "id": "call_01",
        "type": "function",
        "function": {"name": "run_python", "arguments": ""},
    }
    server.script(
        openai_chunks(
            [
                openai_chunk({"role": "assistant", "content": None, "tool_calls": [opening]}),
                openai_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"code": "imp'}}]}),
                openai_chunk({}, "length"),
            ]
        )
    )
    call, finished = run(openai(server))
    assert call.truncated and call.arguments is None
    assert finished.stop_reason == "max_tokens"


# OpenAI: refusals and other choices -------------------------------------------------------------


def test_openai_refusal_text_is_kept_as_the_refusal(server):
    # The shape of OpenAI's structured-output refusals: content null, refusal text in deltas.
    server.script(
        openai_chunks(
            [
                openai_chunk({"role": "assistant", "content": None, "refusal": ""}),
                openai_chunk({"refusal": "I'm sorry, "}),
                openai_chunk({"refusal": "I can't help with that."}),
                openai_chunk({}, "stop"),
            ]
        )
    )
    assert run(openai(server)) == [Finished("refusal", None, None, "I'm sorry, I can't help with that.")]


def test_only_choice_zero_is_read_whatever_the_order_of_choices(server):
    def two(first: dict, second: dict, finish: str | None = None) -> dict:
        chunk = openai_chunk(first, finish)
        other = {"index": 1, "delta": second, "logprobs": None, "finish_reason": finish}
        chunk["choices"] = [other, {**chunk["choices"][0], "index": 0}]
        return chunk

    server.script(
        openai_chunks([two({"content": "zero"}, {"content": "one"}), two({}, {"content": " more"}, "stop")])
    )
    assert run(openai(server)) == [TextDelta("zero"), Finished("end_turn", None, None)]


# 404: a wrong base URL, or an unknown model -------------------------------------------------------


def test_anthropic_404_for_the_path_names_the_base_url_setting(server):
    server.script(anthropic_error(404, "not_found_error", "Not Found"))
    with pytest.raises(EndpointNotFound, match=r"/v1/messages answered 404.*check ANTHROPIC_BASE_URL"):
        run(anthropic(server))


def test_anthropic_404_naming_a_model_is_an_unknown_model(server):
    server.script(anthropic_error(404, "not_found_error", "model: claude-nonexistent"))
    with pytest.raises(UnknownModel, match="claude-nonexistent"):
        run(anthropic(server))


def test_an_html_404_from_something_else_is_a_wrong_base_url(server):
    server.script(error(404, "<html><body>404 page not found</body></html>"))
    with pytest.raises(EndpointNotFound, match="check OPENAI_BASE_URL"):
        run(openai(server))


def test_openai_invalid_url_404_is_a_wrong_base_url(server):
    server.script(openai_error(404, "Invalid URL (POST /v1/v1/chat/completions)"))
    with pytest.raises(EndpointNotFound, match="check OPENAI_BASE_URL"):
        run(openai(server))


def test_openai_model_not_found_is_an_unknown_model(server):
    server.script(openai_error(404, "The model `gpt-9` does not exist", code="model_not_found"))
    with pytest.raises(UnknownModel, match="gpt-9"):
        run(openai(server))


def test_ollama_model_not_found_is_an_unknown_model_and_a_wrong_url_names_its_setting(server):
    env = {"OLLAMA_BASE_URL": server.ollama_base_url}
    server.script(
        error(
            404, {"error": {"message": 'model "qwen9" not found, try pulling it first', "type": "api_error"}}
        )
    )
    provider, model = provider_for("ollama/qwen9", env=env)
    with pytest.raises(UnknownModel, match="qwen9"):
        run(provider, model)
    # A base URL without /v1: Ollama's router answers its plain "404 page not found".
    provider, model = provider_for("ollama/qwen2.5", env={"OLLAMA_BASE_URL": server.ollama_base_url[:-3]})
    with pytest.raises(EndpointNotFound, match="check OLLAMA_BASE_URL"):
        run(provider, model)
