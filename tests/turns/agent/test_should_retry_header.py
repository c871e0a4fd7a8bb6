"""The server's ``x-should-retry`` header decides retries first, as in the official SDKs.

anthropic-sdk-python and openai-python (``_should_retry`` in ``src/*/_base_client.py``) check, in
this order: ``x-should-retry: true`` retries, ``x-should-retry: false`` does not, then 408, 409
and 424 are retried, then 429 and 5xx. Anthropic's API sends the header on its error responses.
"""

import pytest

from analyst.turns.agent.providers import (
    BadRequest,
    Finished,
    ProviderUnavailable,
    RateLimited,
    TextDelta,
)
from tests.fakes.model_server import (
    anthropic_error,
    anthropic_text,
    openai_error,
    openai_text,
)
from tests.turns.agent.asking import anthropic, ask, openai


def test_anthropic_overloaded_with_should_retry_false_is_not_retried(server, sleeps):
    no = {"x-should-retry": "false"}
    server.script(anthropic_error(529, "overloaded_error", "Overloaded", headers=no))
    with pytest.raises(ProviderUnavailable, match=r"Overloaded \(the provider asked not to retry\)"):
        ask(anthropic(server, sleeps))
    assert len(server.requests) == 1 and sleeps == []


def test_anthropic_rate_limit_with_should_retry_false_is_not_retried(server, sleeps):
    no = {"x-should-retry": "false", "retry-after": "1"}
    server.script(anthropic_error(429, "rate_limit_error", "Number of requests exceeded", headers=no))
    with pytest.raises(RateLimited, match="asked not to retry"):
        ask(anthropic(server, sleeps))
    assert len(server.requests) == 1 and sleeps == []


def test_anthropic_should_retry_true_retries_an_error_that_is_otherwise_final(server, sleeps):
    yes = {"x-should-retry": "true"}
    refused = anthropic_error(400, "invalid_request_error", "try me again", headers=yes)
    server.script(refused, anthropic_text("hi"))
    assert ask(anthropic(server, sleeps)) == [TextDelta("hi"), Finished("end_turn", 12, 7)]
    assert len(server.requests) == 2 and len(sleeps) == 1


def test_should_retry_true_still_gives_up_after_the_attempts(server, sleeps):
    yes = {"x-should-retry": "true"}
    server.script(*[anthropic_error(400, "invalid_request_error", "again", headers=yes)] * 4)
    with pytest.raises(BadRequest, match=r"gave up after 4 attempts"):
        ask(anthropic(server, sleeps))
    assert len(server.requests) == 4


def test_the_header_wins_over_the_status_checked_after_it(server, sleeps):
    # 408 is retried by status alone, but the header is read first.
    no = {"x-should-retry": "false"}
    server.script(anthropic_error(408, "timeout_error", "Request timed out", headers=no))
    with pytest.raises(BadRequest, match="Request timed out"):
        ask(anthropic(server, sleeps))
    assert len(server.requests) == 1


@pytest.mark.parametrize("status", [408, 409, 424])
def test_request_timeout_lock_timeout_and_failed_dependency_are_retried(server, sleeps, status):
    # Without the status rule these are final: a 4xx whose body names nothing retryable.
    server.script(openai_error(status, f"HTTP {status}"), openai_text("hi"))
    assert ask(openai(server, sleeps))[0] == TextDelta("hi")
    assert len(server.requests) == 2


def test_openai_server_error_with_should_retry_false_is_not_retried(server, sleeps):
    no = {"x-should-retry": "false"}
    server.script(openai_error(500, "The server had an error", type="server_error", headers=no))
    with pytest.raises(ProviderUnavailable, match="asked not to retry"):
        ask(openai(server, sleeps))
    assert len(server.requests) == 1 and sleeps == []


def test_openai_should_retry_true_retries_a_bad_request(server, sleeps):
    yes = {"x-should-retry": "true"}
    server.script(openai_error(400, "retry this one", headers=yes), openai_text("ok"))
    assert ask(openai(server, sleeps))[0] == TextDelta("ok")
    assert len(server.requests) == 2


@pytest.mark.parametrize("value", ["False", "0", "no", ""])
def test_only_the_exact_words_count_as_the_sdks_compare_them(server, sleeps, value):
    server.script(anthropic_error(529, "overloaded_error", "Overloaded", headers={"x-should-retry": value}))
    server.script(anthropic_text("hi"))
    assert ask(anthropic(server, sleeps))[0] == TextDelta("hi")
    assert len(server.requests) == 2
