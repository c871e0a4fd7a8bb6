"""Router strings ("anthropic/claude-sonnet-4-5", "openai/gpt-4.1", "ollama/qwen2.5",
"azure/<deployment>") to providers."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TypedDict

import httpx

from analyst.turns.agent.providers.anthropic import AnthropicProvider
from analyst.turns.agent.providers.azure import AzureOpenAIProvider
from analyst.turns.agent.providers.base import Provider
from analyst.turns.agent.providers.errors import BadRequest, MissingApiKey, MissingSetting, UnknownModel
from analyst.turns.agent.providers.http import FIRST_BYTE_TIMEOUT, IDLE_TIMEOUT
from analyst.turns.agent.providers.openai import OpenAIProvider

DEFAULT_OLLAMA_URL = "http://127.0.0.1:11434/v1"


def provider_for(
    route: str,
    *,
    env: Mapping[str, str] = os.environ,
    http: httpx.Client | None = None,
    first_byte_timeout: float = FIRST_BYTE_TIMEOUT,
    idle_timeout: float = IDLE_TIMEOUT,
) -> tuple[Provider, str]:
    """The provider for ``route`` and the model name it takes, configured from ``env``.

    Keys and base URLs: ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL, OPENAI_API_KEY / OPENAI_BASE_URL,
    OLLAMA_BASE_URL (no key); Azure OpenAI as the official SDK's AzureOpenAI reads it:
    AZURE_OPENAI_API_KEY, AZURE_OPENAI_ENDPOINT, OPENAI_API_VERSION (its model is the deployment).
    The provider owns its own HTTP client unless ``http`` is given: close it when done. The
    timeouts are HttpProvider's. Raises BadRequest for an unknown prefix, UnknownModel when the
    model is missing, MissingApiKey or MissingSetting (naming the variable) when the provider
    needs a key or setting and has none.
    """
    prefix, _, model = route.strip().partition("/")
    factory = FACTORIES.get(prefix)
    if factory is None:
        known = ", ".join(f"{name}/<model>" for name in FACTORIES)
        raise BadRequest(f"unknown model provider in {route!r}: use one of {known}")
    if not model.strip():
        raise UnknownModel(f"no model named in {route!r}: write {prefix}/<model>")
    options = Options(http=http, first_byte_timeout=first_byte_timeout, idle_timeout=idle_timeout)
    return factory(env, options), model.strip()


class Options(TypedDict):
    """What every provider's constructor takes besides its key and base URL."""

    http: httpx.Client | None
    first_byte_timeout: float
    idle_timeout: float


def _anthropic(env: Mapping[str, str], options: Options) -> Provider:
    base_url = env.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com"
    return AnthropicProvider(env.get("ANTHROPIC_API_KEY"), base_url=base_url, **options)


def _openai(env: Mapping[str, str], options: Options) -> Provider:
    if not env.get("OPENAI_API_KEY"):
        raise MissingApiKey("openai", "OPENAI_API_KEY")
    base_url = env.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
    return OpenAIProvider(env["OPENAI_API_KEY"], base_url=base_url, **options)


def _ollama(env: Mapping[str, str], options: Options) -> Provider:
    base_url = env.get("OLLAMA_BASE_URL") or DEFAULT_OLLAMA_URL
    return OpenAIProvider(
        None,
        base_url=base_url,
        **options,
        supports_images=False,
        max_tokens_field="max_tokens",
        base_url_setting="OLLAMA_BASE_URL",
    )


def _azure(env: Mapping[str, str], options: Options) -> Provider:
    if not env.get("AZURE_OPENAI_API_KEY"):
        raise MissingApiKey("azure", "AZURE_OPENAI_API_KEY")
    for variable, what in AZURE_SETTINGS.items():
        if not env.get(variable):
            raise MissingSetting("azure", variable, what)
    return AzureOpenAIProvider(
        env["AZURE_OPENAI_API_KEY"],
        endpoint=env["AZURE_OPENAI_ENDPOINT"],
        api_version=env["OPENAI_API_VERSION"],
        **options,
    )


FACTORIES: dict[str, Callable[[Mapping[str, str], Options], Provider]] = {
    "anthropic": _anthropic,
    "openai": _openai,
    "ollama": _ollama,
    "azure": _azure,
}


KEY_VARIABLES = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "azure": "AZURE_OPENAI_API_KEY",
}
# What Azure needs besides its key; the SDK has no default for either (nor do we).
AZURE_SETTINGS = {
    "AZURE_OPENAI_ENDPOINT": "its resource's endpoint (https://<resource>.openai.azure.com)",
    "OPENAI_API_VERSION": "an API version (such as 2024-10-21)",
}
OTHER_SETTINGS = {"azure": tuple(AZURE_SETTINGS)}


def missing_key(route: str, env: Mapping[str, str] = os.environ) -> str | None:
    """The environment variable ``route``'s provider needs and lacks (its key first), or None.

    Ollama needs none; Azure needs its endpoint and API version besides its key.
    """
    provider = route.strip().partition("/")[0]
    key = KEY_VARIABLES.get(provider)
    needed = ((key,) if key else ()) + OTHER_SETTINGS.get(provider, ())
    return next((variable for variable in needed if not env.get(variable)), None)
