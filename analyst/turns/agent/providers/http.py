"""What every HTTP provider shares: its client (its own unless given), timeouts, retries, close.

Two read timeouts: ``first_byte_timeout`` for the answer's headers (a model that hangs before
answering is given up on, and retried, soon), then ``idle_timeout`` for each wait between the
answer's bytes (a stream that stalls). Both are well under the turn's own limit.
"""

from __future__ import annotations

import functools
import ssl
import time
from collections.abc import Callable

import certifi
import httpx

from analyst.turns.agent.providers.base import Provider
from analyst.turns.agent.providers.retry import RetryPolicy

CONNECT_TIMEOUT = 10.0
FIRST_BYTE_TIMEOUT = 30.0
IDLE_TIMEOUT = 60.0


@functools.cache
def _tls_context() -> ssl.SSLContext:
    return ssl.create_default_context(cafile=certifi.where())


def new_http_client() -> httpx.Client:
    """An HTTP client sharing one verifying TLS context: building one costs ~25 ms per turn."""
    return httpx.Client(verify=_tls_context())


class HttpProvider(Provider):
    def __init__(
        self,
        *,
        http: httpx.Client | None,
        first_byte_timeout: float,
        idle_timeout: float,
        max_retries: int,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """``max_retries`` come after the first try."""
        self._owns_http = http is None
        self._http = http or new_http_client()
        self._timeout = httpx.Timeout(first_byte_timeout, connect=CONNECT_TIMEOUT)
        self._idle_timeout = idle_timeout
        self._retry = RetryPolicy(attempts=max_retries + 1, sleep=sleep)

    def close(self) -> None:
        if self._owns_http:
            self._http.close()
