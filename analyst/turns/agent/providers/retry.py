"""Opening a provider's stream with bounded retries: backoff with jitter, honouring Retry-After.

Only the opening is retried (a refused or failed request, before the answer's first byte):
a stream that breaks later is never replayed, since its start has already reached the user.
Whether an error response is retried is decided as the official Anthropic and OpenAI SDKs decide
it (``_should_retry`` in their ``_base_client.py``): the server's ``x-should-retry`` header first,
then a request timeout (408), lock timeout (409) or failed dependency (424), then what the error
itself says.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

from analyst.turns.agent.providers.base import Retrying, RetryListener
from analyst.turns.agent.providers.errors import ProviderError, ProviderUnavailable, from_transport

ErrorMapper = Callable[[httpx.Response], ProviderError]

# Statuses the SDKs retry whatever the body says; 429 and 5xx are already retryable errors here.
RETRIED_STATUSES = frozenset({408, 409, 424})


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait: ``attempts`` counts the first try."""

    attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 60.0
    sleep: Callable[[float], None] = time.sleep

    def delay(self, attempt: int, retry_after: str | None = None) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based).

        The server's Retry-After (seconds or an HTTP date) wins, capped at ``max_retry_after``
        (``open_stream`` gives up at once on a longer one);
        otherwise exponential backoff, capped at ``max_delay``, with its upper half jittered.
        """
        asked = parse_retry_after(retry_after)
        if asked is not None:
            return min(asked, self.max_retry_after)
        backoff = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        return backoff / 2 + random.uniform(0, backoff / 2)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header, or None if absent or unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


@contextlib.contextmanager
def open_stream(
    http: httpx.Client,
    request: httpx.Request,
    policy: RetryPolicy,
    error_for: ErrorMapper,
    *,
    idle_timeout: float | None = None,
    on_retry: RetryListener | None = None,
) -> Iterator[httpx.Response]:
    """A successful streaming response to ``request``, closed on exit.

    ``error_for`` turns an error response (body already read) into the provider's error; retryable
    errors and transport failures are retried per ``policy``, each retry told to ``on_retry``
    first. The request's read timeout bounds the wait for the answer's headers; once they are in,
    ``idle_timeout`` bounds each wait for more of the body. Transport errors while the body is
    read inside the block become ProviderUnavailable, not retried.
    """
    response = _send(http, request, policy, error_for, on_retry)
    if idle_timeout is not None:
        # httpcore reads this per request when the body starts, so the body gets the idle bound.
        request.extensions.setdefault("timeout", {})["read"] = idle_timeout
    try:
        yield response
    except httpx.ReadTimeout as exc:
        raise ProviderUnavailable(
            f"the answer from {request.url} stalled: nothing for {idle_timeout} s"
        ) from exc
    except httpx.TransportError as exc:
        raise ProviderUnavailable(f"the answer from {request.url} broke off: {exc}") from exc
    finally:
        response.close()


def _send(
    http: httpx.Client,
    request: httpx.Request,
    policy: RetryPolicy,
    error_for: ErrorMapper,
    on_retry: RetryListener | None,
) -> httpx.Response:
    attempt = 1
    while True:
        retry_after = None
        cause: Exception | None = None
        try:
            response = http.send(request, stream=True)
            if response.status_code < 400:
                return response
            with contextlib.closing(response):
                response.read()
            error, retry_after = error_for(response), response.headers.get("retry-after")
            retry = should_retry(response, error)
        except httpx.TransportError as exc:
            error, cause = from_transport(exc, request.url), exc
            retry = error.retryable
        if not retry:
            if error.retryable:  # only the server's x-should-retry: false stops a retryable error
                raise type(error)(f"{error.message} (the provider asked not to retry)") from cause
            raise error from cause
        asked = parse_retry_after(retry_after)
        if asked is not None and asked > policy.max_retry_after:
            # Waiting that long in silence would hold the turn and its worker: say it instead.
            later = f"asks to wait {_duration(asked)} before the next request"
            raise type(error)(f"{error.message} (the provider {later}; try again then)") from cause
        if attempt >= policy.attempts:
            raise type(error)(f"{error.message} (gave up after {attempt} attempts)") from cause
        delay = policy.delay(attempt, retry_after)
        if on_retry is not None:
            on_retry(Retrying(attempt, policy.attempts - 1, delay, error.message))
        policy.sleep(delay)
        attempt += 1


def should_retry(response: httpx.Response, error: ProviderError) -> bool:
    """Whether an error response is worth another try, checked in the SDKs' order.

    ``x-should-retry: true`` or ``false`` (Anthropic's and OpenAI's servers send it) wins over
    everything; then 408, 409 and 424 are retried; then ``error`` decides (429, 5xx, overloaded).
    """
    asked = response.headers.get("x-should-retry")
    if asked == "true":
        return True
    if asked == "false":
        return False
    if response.status_code in RETRIED_STATUSES:
        return True
    return error.retryable


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
