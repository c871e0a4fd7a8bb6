"""A sandboxd's GET /stats (sandboxes, warm pool, memory available), asked briefly: what health
checks, metrics and the choice of a host for a new sandbox go by."""

from __future__ import annotations

from typing import Any

import httpx
from django.conf import settings

TIMEOUT = 2.0


class SandboxdDown(Exception):
    """sandboxd did not answer its stats; the message is safe to show (no URL, no token)."""


def sandboxd_stats(url: str | None = None, *, timeout: float = TIMEOUT) -> dict[str, Any]:
    """The GET /stats of sandboxd at ``url`` (default SANDBOXD_URL); SandboxdDown when it does not
    answer so within ``timeout`` seconds."""
    try:
        response = httpx.get(
            f"{(url or settings.SANDBOXD_URL).rstrip('/')}/stats",
            headers={"Authorization": f"Bearer {settings.SANDBOXD_TOKEN}"},
            timeout=timeout,
        )
    except httpx.TimeoutException:
        raise SandboxdDown("timed out") from None
    except httpx.HTTPError as exc:
        raise SandboxdDown(f"unreachable ({type(exc).__name__})") from None
    if response.status_code == 401:
        raise SandboxdDown("refused the token (SANDBOXD_TOKEN differs from sandboxd's)")
    if response.status_code != 200:
        raise SandboxdDown(f"answered {response.status_code}")
    try:
        return dict(response.json())
    except ValueError:
        raise SandboxdDown("answered something other than JSON") from None
