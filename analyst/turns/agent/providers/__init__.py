"""Model providers spoken over their own wire protocols with httpx, streaming.

provider, model = provider_for("anthropic/claude-sonnet-4-5")
with provider:
    for event in provider.stream(model=model, system="...", messages=[...], tools=[...], max_tokens=4096):
        ...  # TextDelta, ToolCall, then Finished
"""

from analyst.turns.agent.providers.anthropic import AnthropicProvider
from analyst.turns.agent.providers.azure import AzureOpenAIProvider
from analyst.turns.agent.providers.base import (
    ChatMessage,
    Finished,
    ImagePart,
    Part,
    Provider,
    Retrying,
    StreamEvent,
    TextDelta,
    TextPart,
    ToolCall,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)
from analyst.turns.agent.providers.errors import (
    AuthenticationFailed,
    BadRequest,
    MalformedStream,
    MissingApiKey,
    MissingSetting,
    ProviderError,
    ProviderUnavailable,
    RateLimited,
    UnknownModel,
)
from analyst.turns.agent.providers.openai import OpenAIProvider
from analyst.turns.agent.providers.router import provider_for

__all__ = [
    "AnthropicProvider",
    "AuthenticationFailed",
    "AzureOpenAIProvider",
    "BadRequest",
    "ChatMessage",
    "Finished",
    "ImagePart",
    "MalformedStream",
    "MissingApiKey",
    "MissingSetting",
    "OpenAIProvider",
    "Part",
    "Provider",
    "ProviderError",
    "ProviderUnavailable",
    "RateLimited",
    "Retrying",
    "StreamEvent",
    "TextDelta",
    "TextPart",
    "ToolCall",
    "ToolCallPart",
    "ToolResultPart",
    "ToolSpec",
    "UnknownModel",
    "provider_for",
]
