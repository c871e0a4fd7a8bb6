"""Streams recorded by the official SDKs, served byte for byte and read through the real providers.

Every file is in tests/turns/agent/recorded/; SOURCES.md there names each one's repository, path,
commit and test. Files marked "crafted" there are recordings edited for a case no SDK recorded
(a raw U+2028, redacted thinking, two tool_use blocks, a cut-off tool call, an error mid-answer).
The fake cuts each file into 61-byte chunks, so lines and multi-byte characters arrive split.
"""

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from analyst.turns.agent.providers import (
    ChatMessage,
    Finished,
    ProviderError,
    ProviderUnavailable,
    StreamEvent,
    TextDelta,
    TextPart,
    ToolCall,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    provider_for,
)
from tests.fakes.model_server import ScriptedModelServer, recorded

RECORDED = Path(__file__).parent / "recorded"
WEATHER = ToolSpec("get_weather", "Lookup the weather for a given city.", {"type": "object"})
HELLO = [ChatMessage("user", [TextPart("What is the weather in SF?")])]
LS, PS, NEL = "\u2028", "\u2029", "\u0085"  # line and paragraph separators, next line


def replay(
    server: ScriptedModelServer, name: str, route: str, messages: list[ChatMessage] = HELLO
) -> list[StreamEvent]:
    """The events the provider for ``route`` reads from the recorded file ``name``."""
    server.script(recorded(RECORDED / name))
    provider, model = provider_for(route, env=server.env())
    with provider:
        return list(
            provider.stream(model=model, system="", messages=messages, tools=[WEATHER], max_tokens=1024)
        )


def anthropic(
    server: ScriptedModelServer, name: str, messages: list[ChatMessage] = HELLO
) -> list[StreamEvent]:
    return replay(server, name, "anthropic/claude-test", messages)


def openai(server: ScriptedModelServer, name: str) -> list[StreamEvent]:
    return replay(server, name, "openai/gpt-test")


def text_and_rest(events: list[StreamEvent]) -> tuple[str, list[StreamEvent]]:
    """The streamed text whole, and the other events in order; no delta may be empty."""
    deltas = [event.text for event in events if isinstance(event, TextDelta)]
    assert all(deltas), f"an empty TextDelta in {events}"
    return "".join(deltas), [event for event in events if not isinstance(event, TextDelta)]


def events_before_error(
    stream: Iterator[StreamEvent], error: type[ProviderError], match: str
) -> list[StreamEvent]:
    seen: list[StreamEvent] = []
    with pytest.raises(error, match=match):
        for event in stream:
            seen.append(event)
    return seen


@pytest.mark.parametrize("name", sorted(path.name for path in RECORDED.glob("*.sse")))
def test_each_file_is_served_byte_for_byte(server, name):
    body = (RECORDED / name).read_bytes()
    server.script(recorded(RECORDED / name))
    response = httpx.post(
        server.url + "/v1/messages",
        json={"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "hi"}]},
        headers={"x-api-key": "k", "anthropic-version": "2023-06-01"},
    )
    assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert response.content == body


# Anthropic ------------------------------------------------------------------------------------


def test_anthropic_text(server):
    # anthropic-sdk-python tests/lib/streaming/fixtures/basic_response.txt: its last event lacks
    # the blank line (and the newline) that should close it.
    assert (RECORDED / "anthropic_text.sse").read_bytes().endswith(b'{"type":"message_stop"}')
    assert text_and_rest(anthropic(server, "anthropic_text.sse")) == (
        "Hello there!",
        [Finished("end_turn", 11, 6)],
    )


def test_anthropic_text_then_a_tool_call_split_across_deltas(server):
    # anthropic-sdk-python tests/lib/streaming/fixtures/tool_use_response.txt
    text, rest = text_and_rest(anthropic(server, "anthropic_text_then_tool_use.sse"))
    assert text == "I'll check the current weather in Paris for you."
    arguments = '{"location": "Paris"}'
    assert rest == [
        ToolCall("toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather", {"location": "Paris"}, arguments),
        Finished("tool_use", 377, 65),
    ]


def test_anthropic_live_tool_call(server):
    # anthropic-sdk-python's recording of the live API (TestSyncRunTools 555fb399..., first
    # answer): data lines padded with spaces, the JSON in nine pieces.
    arguments = '{"location": "San Francisco, CA", "units": "f"}'
    assert anthropic(server, "anthropic_live_tool_use.sse") == [
        ToolCall(
            "toolu_018acGYLtfR52q9yDbWaEdQZ",
            "get_weather",
            {"location": "San Francisco, CA", "units": "f"},
            arguments,
        ),
        Finished("tool_use", 656, 74),
    ]


def test_anthropic_live_answer_after_a_tool_result(server):
    # The same recording's second answer, to the conversation it was recorded for.
    call = ToolCallPart(
        "toolu_018acGYLtfR52q9yDbWaEdQZ", "get_weather", {"location": "San Francisco, CA", "units": "f"}
    )
    result = '{"location": "San Francisco, CA", "temperature": "68\\u00b0F", "condition": "Sunny"}'
    messages = [
        *HELLO,
        ChatMessage("assistant", [call]),
        ChatMessage("user", [ToolResultPart(call.id, [TextPart(result)])]),
    ]
    text, rest = text_and_rest(anthropic(server, "anthropic_live_text_after_tool_result.sse", messages))
    assert text == (
        "The weather in San Francisco, CA is currently:\n- **Temperature:** 68°F\n- **Condition:** Sunny\n\n"
        "It's a nice sunny day!"
    )
    assert rest == [Finished("end_turn", 770, 38)]


def test_anthropic_two_tool_calls_in_one_answer(server):
    # Crafted: the live tool_use recording with the tool_use block of a second live recording
    # (TestSyncRunTools 771c64ff...) added as block 1.
    arguments = '{"location": "San Francisco, CA", "units": "f"}'
    decoded = {"location": "San Francisco, CA", "units": "f"}
    assert anthropic(server, "anthropic_parallel_tool_use.sse") == [
        ToolCall("toolu_018acGYLtfR52q9yDbWaEdQZ", "get_weather", decoded, arguments),
        ToolCall("toolu_01TJoxvFknVdnV9XpWFPaRmY", "get_weather", decoded, arguments),
        Finished("tool_use", 656, 74),
    ]


def test_anthropic_max_tokens_in_the_middle_of_a_tool_call(server):
    # anthropic-sdk-python tests/lib/streaming/fixtures/incomplete_partial_json_response.txt:
    # the tool_use block never stops; message_delta says max_tokens, then message_stop.
    text, rest = text_and_rest(anthropic(server, "anthropic_max_tokens_in_tool_use.sse"))
    assert text == (
        "I'll create a comprehensive tax guide for someone with multiple W2s and save it in a file"
        " called taxes.txt. Let me do that for you now."
    )
    raw = (
        '{"filename": "taxes.txt", "lines_of_text": [\n"# COMPREHENSIVE TAX GUIDE FOR INDIVIDUALS WITH'
        ' MULTIPLE W-2s",\n"",\n"## INTRODUCTION",\n"",\n"Filing taxes'
    )
    call, finished = rest
    assert isinstance(call, ToolCall) and call.error
    assert dataclasses.replace(call, error=None) == ToolCall(
        "toolu_01EKqbqmZrGRXy18eN7m9kvY", "make_file", None, raw, truncated=True
    )
    assert finished == Finished("max_tokens", 450, 124)


def test_anthropic_refusal(server):
    # anthropic-sdk-python tests/lib/streaming/fixtures/refusal_response.txt: an empty text
    # block, then stop_reason "refusal".
    assert anthropic(server, "anthropic_refusal.sse") == [Finished("refusal", 20, 0)]


def test_anthropic_thinking_is_skipped(server):
    # anthropic-sdk-python tests/fixtures/fable-fallback/stream-a-refusal.sse: a thinking block
    # (thinking_delta, signature_delta), a text block, then a refusal.
    assert text_and_rest(anthropic(server, "anthropic_thinking_then_refusal.sse")) == (
        "Hi",
        [Finished("refusal", 28, 106)],
    )


def test_anthropic_redacted_thinking_is_skipped(server):
    # Crafted: basic_response.txt with a redacted_thinking block before its text.
    assert text_and_rest(anthropic(server, "anthropic_redacted_thinking.sse")) == (
        "Hello there!",
        [Finished("end_turn", 11, 6)],
    )


def test_anthropic_server_tool_use_and_web_search_results_are_skipped(server):
    # anthropic-sdk-python tests/fixtures/fable-fallback/stream-a-toolrefusal.sse: a
    # server_tool_use block with input_json_delta, a web_search_tool_result, text, a refusal.
    text, rest = text_and_rest(anthropic(server, "anthropic_web_search_then_refusal.sse"))
    assert text == "Here's a summary of this year's solar eclipses and how"
    assert rest == [Finished("refusal", 28, 106)]


@pytest.mark.parametrize(
    ("name", "usage"),
    [("anthropic_compaction_block.sse", (30, 8)), ("anthropic_fallback_block.sse", (25, 8))],
)
def test_anthropic_block_types_it_does_not_know_are_skipped(server, name, usage):
    # anthropic-sdk-python tests/lib/streaming/fixtures/compaction_response.txt (a block with
    # its own compaction_delta) and fallback_response.txt (a block with no deltas at all).
    assert text_and_rest(anthropic(server, name)) == ("Hello there!", [Finished("end_turn", *usage)])


def test_anthropic_error_event(server):
    # anthropic-sdk-python tests/test_streaming.py::test_error_type, its two byte strings.
    server.script(recorded(RECORDED / "anthropic_error_overloaded.sse"))
    provider, model = provider_for("anthropic/claude-test", env=server.env())
    with provider:
        stream = provider.stream(model=model, system="", messages=HELLO, tools=[], max_tokens=64)
        assert events_before_error(stream, ProviderUnavailable, "Overloaded") == []


def test_anthropic_error_event_mid_answer(server):
    # Crafted: basic_response.txt's first two text deltas, then test_error_type's error event.
    server.script(recorded(RECORDED / "anthropic_text_then_overloaded.sse"))
    provider, model = provider_for("anthropic/claude-test", env=server.env())
    with provider:
        stream = provider.stream(model=model, system="", messages=HELLO, tools=[], max_tokens=64)
        seen = events_before_error(stream, ProviderUnavailable, "Overloaded")
    assert seen == [TextDelta("Hello"), TextDelta(" there")]


def test_anthropic_raw_line_separators_in_text_and_tool_json(server):
    # Crafted: tool_use_response.txt with raw U+2028, U+2029 and U+0085 in a text delta and a raw
    # U+2028 inside a JSON string of the tool input (legal JSON, sent unescaped).
    assert f"in{LS}Paris".encode() in (RECORDED / "anthropic_u2028_in_text_and_tool_json.sse").read_bytes()
    text, rest = text_and_rest(anthropic(server, "anthropic_u2028_in_text_and_tool_json.sse"))
    assert text == f"I'll check the current weather in{LS}Paris{PS}for you.{NEL}"
    arguments = f'{{"location": "Par{LS}is"}}'
    assert rest == [
        ToolCall("toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather", {"location": f"Par{LS}is"}, arguments),
        Finished("tool_use", 377, 65),
    ]


# OpenAI ---------------------------------------------------------------------------------------


def test_openai_text_then_a_usage_only_chunk(server):
    # openai-python .inline-snapshot/external/e2aad469b71d*.bin (test_parse_nothing): the token
    # counts come in a last chunk with "choices": [].
    text, rest = text_and_rest(openai(server, "openai_text.sse"))
    assert text == (
        "I'm unable to provide real-time weather updates. To get the current weather in San Francisco,"
        " I recommend checking a reliable weather website or a weather app."
    )
    assert rest == [Finished("end_turn", 14, 30)]


def test_openai_text_with_logprobs(server):
    # openai-python external/83b060bae42e*.bin (test_content_logprobs_events)
    assert text_and_rest(openai(server, "openai_text_with_logprobs.sse")) == (
        "Foo!",
        [Finished("end_turn", 9, 2)],
    )


def test_openai_tool_call_split_across_deltas(server):
    # openai-python external/2018feb66ae1*.bin (test_allows_non_strict_tools_but_no_parsing)
    assert openai(server, "openai_tool_call.sse") == [
        ToolCall(
            "call_4XzlGBLtUe9dy3GVNV4jhq7h",
            "get_weather",
            {"city": "New York City"},
            '{"city":"New York City"}',
        ),
        Finished("tool_use", 44, 16),
    ]


def test_openai_parallel_tool_calls(server):
    # openai-python external/f82268f2fefd*.bin (test_parse_multiple_pydantic_tools)
    weather = '{"city": "Edinburgh", "country": "GB", "units": "c"}'
    stock = '{"ticker": "AAPL", "exchange": "NASDAQ"}'
    assert openai(server, "openai_parallel_tool_calls.sse") == [
        ToolCall(
            "call_JMW1whyEaYG438VE1OIflxA2",
            "GetWeatherArgs",
            {"city": "Edinburgh", "country": "GB", "units": "c"},
            weather,
        ),
        ToolCall(
            "call_DNYTawLBoN8fj3KN6qU9N1Ou",
            "get_stock_price",
            {"ticker": "AAPL", "exchange": "NASDAQ"},
            stock,
        ),
        Finished("tool_use", 149, 60),
    ]


@pytest.mark.parametrize(
    ("name", "refusal", "usage"),
    [
        ("openai_refusal.sse", "I'm sorry, I can't assist with that request.", (79, 11)),
        ("openai_refusal_with_logprobs.sse", "I'm very sorry, but I can't assist with that.", (79, 12)),
    ],
)
def test_openai_refusal_is_kept_whole_and_not_streamed_as_text(server, name, refusal, usage):
    # openai-python external/173417d55340*.bin (test_parse_pydantic_model_refusal) and
    # external/569c877e6942*.bin (test_refusal_logprobs_events): finish_reason "stop".
    assert openai(server, name) == [Finished("refusal", *usage, refusal=refusal)]


def test_openai_length_limit(server):
    # openai-python external/4cc50a6135d2*.bin (test_parse_max_tokens_reached, max_tokens=1)
    assert openai(server, "openai_length.sse") == [TextDelta('{"'), Finished("max_tokens", 79, 1)]


def test_openai_tool_call_cut_off_by_the_length_limit(server):
    # Crafted: openai_tool_call.sse stopped after the "New" fragment by finish_reason "length".
    call, finished = openai(server, "openai_tool_call_cut_by_length.sse")
    assert isinstance(call, ToolCall) and call.error
    assert dataclasses.replace(call, error=None) == ToolCall(
        "call_4XzlGBLtUe9dy3GVNV4jhq7h", "get_weather", None, '{"city":"New', truncated=True
    )
    assert finished == Finished("max_tokens", 44, 16)


def test_openai_only_choice_zero_is_read(server):
    # openai-python external/a491adda08c3*.bin (test_parse_pydantic_model_multiple_choices, n=3):
    # chunks of choices 0, 1 and 2 interleave.
    text, rest = text_and_rest(openai(server, "openai_three_choices.sse"))
    assert text == '{"city":"San Francisco","temperature":65,"units":"f"}'
    assert rest == [Finished("end_turn", 79, 42)]


def test_openai_error_chunk(server):
    # openai-node tests/lib/streaming-core.test.ts ("raises typed API errors embedded in
    # streamed data"): an error chunk where the answer should be.
    server.script(recorded(RECORDED / "openai_error.sse"))
    provider, model = provider_for("openai/gpt-test", env=server.env())
    with provider:
        stream = provider.stream(model=model, system="", messages=HELLO, tools=[], max_tokens=64)
        assert events_before_error(stream, ProviderError, "stream failed") == []


def test_openai_error_chunk_mid_answer(server):
    # Crafted: openai_text.sse's first four chunks, then the error chunk above.
    server.script(recorded(RECORDED / "openai_text_then_error.sse"))
    provider, model = provider_for("openai/gpt-test", env=server.env())
    with provider:
        stream = provider.stream(model=model, system="", messages=HELLO, tools=[], max_tokens=64)
        seen = events_before_error(stream, ProviderError, "stream failed")
    assert seen == [TextDelta("I'm"), TextDelta(" unable"), TextDelta(" to")]


def test_openai_raw_line_separators_in_text(server):
    # Crafted: openai_text.sse with a raw U+2028 after " real" and U+2029, U+0085 after "-time".
    text, rest = text_and_rest(openai(server, "openai_u2028_in_text.sse"))
    assert text.startswith(f"I'm unable to provide real{LS}-time{PS}{NEL} weather updates. To get")
    assert text.endswith("a reliable weather website or a weather app.")
    assert rest == [Finished("end_turn", 14, 30)]


def test_openai_raw_line_separators_in_tool_json(server):
    # Crafted: openai_tool_call.sse with the fragment " York" sent as raw "\u2028York\u2029".
    arguments = f'{{"city":"New{LS}York{PS} City"}}'
    assert openai(server, "openai_u2028_in_tool_json.sse") == [
        ToolCall(
            "call_4XzlGBLtUe9dy3GVNV4jhq7h", "get_weather", {"city": f"New{LS}York{PS} City"}, arguments
        ),
        Finished("tool_use", 44, 16),
    ]
