"""The HTTP client a worker process keeps across turns for the model providers (connections to
their APIs are reused)."""

from __future__ import annotations

from django.conf import settings

from analyst.lib.per_process import PerProcess
from analyst.turns.agent.providers import Provider, provider_for
from analyst.turns.agent.providers.http import new_http_client

_http = PerProcess(new_http_client)


def provider(route: str) -> tuple[Provider, str]:
    """provider_for, over this process's shared HTTP client (connections to the API are reused),
    with the timeouts from settings."""
    return provider_for(
        route,
        http=_http.get(),
        first_byte_timeout=settings.ANALYST_MODEL_FIRST_BYTE_TIMEOUT,
        idle_timeout=settings.ANALYST_MODEL_IDLE_TIMEOUT,
    )
