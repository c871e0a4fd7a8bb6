"""A model that hangs before answering, or stalls mid-answer, is given up on by its own bounds
(first byte, idle), each far under the turn's limit; each retry is told to the listener."""

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from analyst.turns.agent.providers import (
    AnthropicProvider,
    Finished,
    ProviderUnavailable,
    Retrying,
    TextDelta,
)
from tests.fakes.model_server import ScriptedModelServer, anthropic_text
from tests.turns.agent.asking import HELLO


def ask(provider, retries: list | None = None) -> list:
    on_retry = retries.append if retries is not None else None
    with provider:
        return list(
            provider.stream(model="m", system="", messages=HELLO, tools=[], max_tokens=10, on_retry=on_retry)
        )


@pytest.fixture
def silent_url() -> Iterator[str]:
    """A server that takes connections (the kernel's backlog) and never says a word."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=16)
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    listener.close()


@pytest.fixture
def slow_start_url() -> Iterator[str]:
    """A server whose answer's headers come after 0.6 s, then the whole answer at once."""
    listener = socket.create_server(("127.0.0.1", 0))
    body = b"".join(anthropic_text("late but whole").chunks)

    def serve() -> None:
        connection, _ = listener.accept()
        with connection:
            connection.recv(65536)
            time.sleep(0.6)
            head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n"
            connection.sendall(head + b"content-length: %d\r\n\r\n" % len(body) + body)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    thread.join(5)
    listener.close()


def test_no_first_byte_in_time_is_retried_then_unavailable_and_each_retry_is_told(silent_url):
    provider = AnthropicProvider(
        "sk-test", base_url=silent_url, first_byte_timeout=0.2, max_retries=2, sleep=lambda _: None
    )
    retries: list[Retrying] = []
    with pytest.raises(ProviderUnavailable, match="sent no answer in time.*gave up after 3 attempts"):
        ask(provider, retries)
    assert [(r.retry, r.retries) for r in retries] == [(1, 2), (2, 2)]
    assert all("sent no answer in time" in r.reason for r in retries)


def test_a_stream_that_stalls_mid_answer_is_given_up_on():
    with ScriptedModelServer() as server:
        server.script(anthropic_text("one two three four").paced(3))
        provider = AnthropicProvider("sk-test", base_url=server.url, idle_timeout=0.2, sleep=lambda _: None)
        with pytest.raises(ProviderUnavailable, match="stalled: nothing for 0.2 s"):
            ask(provider)


def test_the_idle_bound_does_not_apply_to_the_wait_for_the_first_byte(slow_start_url):
    provider = AnthropicProvider(
        "sk-test", base_url=slow_start_url, first_byte_timeout=5, idle_timeout=0.2, max_retries=0
    )
    events = ask(provider)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "late but whole"
    assert isinstance(events[-1], Finished)
