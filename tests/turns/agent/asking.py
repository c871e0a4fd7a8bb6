"""One question to a provider, and providers at the scripted server that record their sleeps."""

from __future__ import annotations

from typing import Any

from analyst.turns.agent.providers import (
    AnthropicProvider,
    ChatMessage,
    OpenAIProvider,
    Provider,
    TextPart,
    ToolSpec,
)
from tests.fakes.model_server import ScriptedModelServer

HELLO = [ChatMessage("user", [TextPart("hello")])]


def ask(
    provider: Provider, model: str = "m", *, max_tokens: int = 10, tools: list[ToolSpec] | None = None
) -> list:
    """Everything ``provider`` streams for HELLO."""
    with provider:
        answer = provider.stream(
            model=model, system="", messages=HELLO, tools=tools or [], max_tokens=max_tokens
        )
        return list(answer)


def anthropic(server: ScriptedModelServer, sleeps: list[float], **kwargs: Any) -> AnthropicProvider:
    return AnthropicProvider("sk-test", base_url=server.url, sleep=sleeps.append, **kwargs)


def openai(server: ScriptedModelServer, sleeps: list[float], **kwargs: Any) -> OpenAIProvider:
    return OpenAIProvider("sk-test", base_url=server.openai_base_url, sleep=sleeps.append, **kwargs)
