"""Retries: 429 and 5xx and unreachable servers are retried with backoff, a started answer never."""

import socket
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from analyst.turns.agent.providers import (
    AnthropicProvider,
    AuthenticationFailed,
    BadRequest,
    Finished,
    ProviderUnavailable,
    RateLimited,
    TextDelta,
)
from analyst.turns.agent.providers.retry import RetryPolicy, parse_retry_after
from tests.fakes.model_server import (
    anthropic_error,
    anthropic_text,
    error,
    openai_error,
    openai_text,
)
from tests.turns.agent.asking import HELLO, anthropic, ask, openai


def test_a_429_with_retry_after_waits_that_long_then_succeeds(server, sleeps):
    server.script(
        anthropic_error(429, "rate_limit_error", "Number of requests exceeded", headers={"retry-after": "1"}),
        anthropic_text("hi"),
    )
    assert ask(anthropic(server, sleeps)) == [TextDelta("hi"), Finished("end_turn", 12, 7)]
    assert sleeps == [1.0]
    assert len(server.requests) == 2
    assert server.requests[0].body == server.requests[1].body


def test_an_http_date_retry_after(server, sleeps):
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    server.script(openai_error(429, "Rate limit reached", headers={"retry-after": later}), openai_text("ok"))
    ask(openai(server, sleeps))
    assert len(sleeps) == 1 and 27 <= sleeps[0] <= 30


def test_a_retry_after_longer_than_the_cap_fails_at_once_saying_how_long(server, sleeps):
    # Waiting silently for the cap (60 s) and then failing anyway held the turn and its worker.
    server.script(anthropic_error(429, "rate_limit_error", "slow down", headers={"retry-after": "5400"}))
    with pytest.raises(RateLimited, match=r"slow down \(the provider asks to wait 90 min"):
        ask(anthropic(server, sleeps))
    assert sleeps == []
    assert len(server.requests) == 1


def test_a_retry_after_at_the_cap_is_waited_for(server, sleeps):
    cap = RetryPolicy().max_retry_after
    server.script(
        openai_error(429, "Rate limit reached", headers={"retry-after": f"{cap:.0f}"}), openai_text("ok")
    )
    ask(openai(server, sleeps))
    assert sleeps == [cap]


@pytest.mark.parametrize(
    ("reply", "make"),
    [
        (anthropic_error(529, "overloaded_error", "Overloaded"), anthropic),
        (anthropic_error(500, "api_error", "Internal server error"), anthropic),
        (openai_error(503, "The engine is currently overloaded", type="server_error"), openai),
        (error(502, "<html>502 Bad Gateway</html>"), openai),
    ],
    ids=["anthropic-529", "anthropic-500", "openai-503", "proxy-502-html"],
)
def test_server_failures_are_retried_with_growing_backoff_then_unavailable(server, sleeps, reply, make):
    server.script(*[reply] * 4)
    with pytest.raises(ProviderUnavailable, match="gave up after 4 attempts") as caught:
        ask(make(server, sleeps))
    assert caught.value.retryable
    assert len(server.requests) == 4
    assert len(sleeps) == 3
    assert 0.25 <= sleeps[0] <= 0.5 and 0.5 <= sleeps[1] <= 1.0 and 1.0 <= sleeps[2] <= 2.0


def test_a_failure_then_success(server, sleeps):
    server.script(openai_error(503, "overloaded", type="server_error"), openai_text("fine"))
    assert ask(openai(server, sleeps))[0] == TextDelta("fine")
    assert len(sleeps) == 1


def test_rate_limits_that_persist(server, sleeps):
    server.script(*[anthropic_error(429, "rate_limit_error", "Too many", headers={"retry-after": "2"})] * 2)
    with pytest.raises(RateLimited, match="Too many"):
        ask(anthropic(server, sleeps, max_retries=1))
    assert sleeps == [2.0]
    assert len(server.requests) == 2


def test_exhausted_quota_is_not_retried(server, sleeps):
    server.script(
        openai_error(
            429, "You exceeded your current quota", type="insufficient_quota", code="insufficient_quota"
        )
    )
    with pytest.raises(BadRequest, match="quota"):
        ask(openai(server, sleeps))
    assert sleeps == []


def test_refusals_are_not_retried(server, sleeps):
    server.script(anthropic_error(401, "authentication_error", "invalid x-api-key"))
    with pytest.raises(AuthenticationFailed):
        ask(anthropic(server, sleeps))
    assert sleeps == [] and len(server.requests) == 1


def test_an_unreachable_server_is_retried_then_unavailable(sleeps):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, never listening: connections are refused
        provider = AnthropicProvider("sk-test", base_url=f"http://127.0.0.1:{port}", sleep=sleeps.append)
        with pytest.raises(ProviderUnavailable, match=f"cannot reach http://127.0.0.1:{port}"):
            ask(provider)
    assert len(sleeps) == 3


def test_a_stream_that_breaks_off_is_never_replayed(server, sleeps):
    server.script(anthropic_text(["one", " two", " three"]).cut(after_chunks=9), anthropic_text("spare"))
    received = []
    with pytest.raises(ProviderUnavailable, match="broke off") as caught:
        received.extend(
            anthropic(server, sleeps).stream(model="m", system="", messages=HELLO, tools=[], max_tokens=9)
        )
    assert caught.value.retryable
    assert received == [TextDelta("one")]
    assert len(server.requests) == 1 and sleeps == []
    assert server.pending == 1  # the spare a replay would have taken
    server.expect_all_used = False


def test_backoff_doubles_up_to_a_cap_with_jitter():
    policy = RetryPolicy(base_delay=1.0, max_delay=4.0)
    for attempt, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 4.0), (10, 4.0)]:
        delays = [policy.delay(attempt) for _ in range(50)]
        assert all(ceiling / 2 <= d <= ceiling for d in delays)
        assert len(set(delays)) > 1  # jittered


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        (None, None),
        ("", None),
        ("3", 3.0),
        ("0.5", 0.5),
        ("-4", 0.0),
        ("soon", None),
        ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0),
    ],
)
def test_retry_after_values(header, seconds):
    assert parse_retry_after(header) == seconds
