"""The one SSE parser both providers share: fields, multi-line data, comments, line endings."""

from collections.abc import Iterator

import httpx
import pytest

from analyst.turns.agent.providers import MalformedStream
from analyst.turns.agent.providers.sse import ServerSentEvent, iter_events, parse_lines


def events_of(text: str) -> list[ServerSentEvent]:
    return list(parse_lines(text.split("\n")))


def test_event_and_data_fields():
    assert events_of('event: ping\ndata: {"type": "ping"}\n\n') == [
        ServerSentEvent("ping", '{"type": "ping"}')
    ]


def test_unnamed_events_are_messages_and_the_space_after_the_colon_is_optional():
    assert events_of("data:one\n\ndata: two\n\n") == [
        ServerSentEvent("message", "one"),
        ServerSentEvent("message", "two"),
    ]


def test_multi_line_data_is_joined_with_newlines():
    assert events_of("data: first\ndata:\ndata: third\n\n")[0].data == "first\n\nthird"


def test_comments_unknown_fields_and_retry_are_ignored():
    text = ": keep-alive\nretry: 1000\nfoo: bar\ndata: x\n: another\n\n"
    assert events_of(text) == [ServerSentEvent("message", "x")]


def test_id_persists_across_events():
    assert [e.id for e in events_of("id: 7\ndata: a\n\ndata: b\n\n")] == ["7", "7"]


def test_an_event_without_data_is_not_dispatched_and_its_name_does_not_leak():
    assert events_of("event: lonely\n\ndata: x\n\n") == [ServerSentEvent("message", "x")]


def test_a_last_event_without_its_closing_blank_line_is_still_dispatched():
    # Servers and proxies that end the stream right after the last data line exist; dropping
    # that event (the spec's rule) lost Anthropic's message_stop and with it the whole answer.
    assert events_of("data: whole\n\nevent: message_stop\ndata: last") == [
        ServerSentEvent("message", "whole"),
        ServerSentEvent("message_stop", "last"),
    ]


def test_json_that_does_not_parse_is_a_malformed_stream():
    with pytest.raises(MalformedStream, match="not JSON"):
        ServerSentEvent("message_start", '{"type": "message_st').json()


def read(chunks: list[bytes], content_type: str = "text/event-stream") -> Iterator[ServerSentEvent]:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": content_type}, content=iter(chunks))

    with httpx.Client(transport=httpx.MockTransport(handler)) as client:
        with client.stream("POST", "http://model.test/stream") as response:
            yield from iter_events(response)


def test_crlf_and_cr_line_endings_even_split_across_chunks():
    chunks = [b"event: a\r", b"\ndata: 1\r\n\r", b"\nevent: b\rdata: 2\r\r"]
    assert list(read(chunks)) == [ServerSentEvent("a", "1"), ServerSentEvent("b", "2")]


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\u0085"])
def test_only_cr_and_lf_end_lines_not_unicode_separators(separator):
    # The APIs send these raw inside JSON strings (openai/openai-python#1230); str.splitlines()
    # and httpx's iter_lines() break lines at them and so cut the event's JSON in two.
    payload = f'data: {{"text": "a{separator}b"}}\n\n'.encode()
    cut = payload.index(separator.encode()) + 1  # inside the character's bytes, or just after
    assert [e.json() for e in read([payload[:cut], payload[cut:]])] == [{"text": f"a{separator}b"}]


def test_a_byte_order_mark_at_the_start_is_dropped():
    assert list(read([b"\xef\xbb\xbfdata: x\n\n"])) == [ServerSentEvent("message", "x")]


def test_a_stream_ending_in_a_lone_cr_ends_its_line():
    assert list(read([b"data: x\r"])) == [ServerSentEvent("message", "x")]


def test_utf8_split_inside_a_character():
    payload = 'data: {"text": "café ☕"}\n\n'.encode()
    cut = payload.index("☕".encode()) + 1
    assert [e.json() for e in read([payload[:cut], payload[cut:]])] == [{"text": "café ☕"}]


def test_an_answer_that_is_not_an_event_stream_is_malformed():
    with pytest.raises(MalformedStream, match="text/html"):
        list(read([b"<html>502 Bad Gateway</html>"], content_type="text/html"))
