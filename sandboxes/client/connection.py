"""Where sandboxd is and how to talk to it: URL and token resolution, timeouts, error mapping."""

from __future__ import annotations

import contextlib
import functools
import os
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from sandboxes import errors

DEFAULT_URL = "http://127.0.0.1:8787"
DEFAULT_REQUEST_TIMEOUT = 30.0
CONNECT_TIMEOUT = 5.0
# Saving or loading a large namespace (snapshot, restore, fork) may take a while.
SNAPSHOT_TIMEOUT = 600.0
# An execution's stream may stay quiet while a cell computes; allow its timeout plus this much.
EXECUTION_MARGIN = 30.0


@dataclass(frozen=True)
class ConnectionConfig:
    url: str
    token: str
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT

    @classmethod
    def resolve(
        cls, url: str | None = None, token: str | None = None, request_timeout: float | None = None
    ) -> ConnectionConfig:
        """Arguments first, then SANDBOXD_URL / SANDBOXD_TOKEN / SANDBOXD_REQUEST_TIMEOUT (seconds)
        from the environment."""
        return cls(
            url=(url or os.environ.get("SANDBOXD_URL") or DEFAULT_URL).rstrip("/"),
            token=token if token is not None else os.environ.get("SANDBOXD_TOKEN", ""),
            request_timeout=request_timeout
            or _env_seconds("SANDBOXD_REQUEST_TIMEOUT")
            or DEFAULT_REQUEST_TIMEOUT,
        )

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def client_options(self) -> dict[str, Any]:
        """Keyword arguments for an httpx client of this connection."""
        return {
            "base_url": self.url,
            "headers": self.headers,
            "timeout": wait_for(self.request_timeout),
            "verify": shared_ssl_context(),
        }


def wait_for(seconds: float) -> httpx.Timeout:
    """``seconds`` for all but connecting, which has CONNECT_TIMEOUT."""
    return httpx.Timeout(seconds, connect=CONNECT_TIMEOUT)


def execution_timeout(cell_timeout: float | None, request_timeout: float | None) -> httpx.Timeout:
    """An execution's stream: ``request_timeout``, else the cell's timeout (or 300 s) and a margin."""
    return wait_for(request_timeout or (cell_timeout or 300.0) + EXECUTION_MARGIN)


def _env_seconds(name: str) -> float | None:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    try:
        seconds = float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number of seconds, not {raw!r}") from None
    return seconds if seconds > 0 else None


@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """One verifying TLS context for every client: building one costs ~17 ms per Sandbox."""
    return ssl.create_default_context()


def raise_for_status(response: httpx.Response) -> None:
    """Turn an error response into the SandboxError its JSON code names (body already read)."""
    if response.status_code < 400:
        return
    try:
        body = response.json()
    except ValueError:
        body = None
    raise errors.from_body(response.status_code, body)


@contextlib.contextmanager
def translate_errors() -> Iterator[None]:
    """httpx's transport errors as the SDK's own exceptions."""
    try:
        yield
    except httpx.TimeoutException as exc:
        raise errors.RequestTimeout(f"the sandbox service did not answer in time ({exc})") from exc
    except httpx.TransportError as exc:
        raise errors.ServiceUnavailable(f"cannot reach the sandbox service: {exc}") from exc
