"""Azure OpenAI deployments: OpenAI's Chat Completions at a deployment's path, keyed by ``api-key``."""

from __future__ import annotations

import time
from collections.abc import Callable
from urllib.parse import quote

import httpx

from analyst.turns.agent.providers.errors import MissingApiKey
from analyst.turns.agent.providers.http import FIRST_BYTE_TIMEOUT, IDLE_TIMEOUT
from analyst.turns.agent.providers.openai import OpenAIProvider

SETTINGS = "AZURE_OPENAI_ENDPOINT and OPENAI_API_VERSION"


class AzureOpenAIProvider(OpenAIProvider):
    """A deployment behind POST {endpoint}/openai/deployments/<model>/chat/completions?api-version=...

    The ``model`` given to ``stream`` is the deployment's name. The key goes in an ``api-key``
    header (Azure ignores ``Authorization: Bearer`` keys), as the official SDK's AzureOpenAI client
    sends it. The length limit is "max_completion_tokens" (its reasoning models refuse
    "max_tokens"; API versions from 2024-10-21 take it for every model).
    """

    def __init__(
        self,
        api_key: str | None,
        *,
        endpoint: str,
        api_version: str,
        http: httpx.Client | None = None,
        max_retries: int = 3,
        first_byte_timeout: float = FIRST_BYTE_TIMEOUT,
        idle_timeout: float = IDLE_TIMEOUT,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """``endpoint`` is the resource's root (https://<resource>.openai.azure.com).

        Raises MissingApiKey if ``api_key`` is empty.
        """
        if not api_key:
            raise MissingApiKey("azure", "AZURE_OPENAI_API_KEY")
        super().__init__(
            None,
            base_url=endpoint.rstrip("/") + "/openai",
            http=http,
            max_retries=max_retries,
            first_byte_timeout=first_byte_timeout,
            idle_timeout=idle_timeout,
            max_tokens_field="max_completion_tokens",
            base_url_setting=SETTINGS,
            sleep=sleep,
        )
        self._headers = {"api-key": api_key}
        self._root = endpoint.rstrip("/") + "/openai/deployments/"
        self._api_version = api_version

    def _endpoint(self, model: str) -> httpx.URL:
        path = f"{self._root}{quote(model, safe='')}/chat/completions"
        return httpx.URL(path, params={"api-version": self._api_version})
