"""Router strings pick a provider and a model, configured from the environment."""

import httpx
import pytest

import analyst.turns.agent.providers as providers
from analyst.turns.agent.providers import (
    AnthropicProvider,
    BadRequest,
    Finished,
    MissingApiKey,
    OpenAIProvider,
    TextDelta,
    UnknownModel,
    provider_for,
)
from tests.fakes.model_server import anthropic_text, openai_text
from tests.turns.agent.asking import ask

PUBLIC_API = [
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


def test_the_public_api_is_pinned():
    assert sorted(providers.__all__) == sorted(PUBLIC_API)
    assert all(hasattr(providers, name) for name in PUBLIC_API)


def test_anthropic_route(server):
    server.script(anthropic_text("hi"))
    provider, model = provider_for("anthropic/claude-sonnet-4-5", env=server.env())
    assert isinstance(provider, AnthropicProvider) and provider.supports_images
    assert model == "claude-sonnet-4-5"
    assert ask(provider, model)[0] == TextDelta("hi")
    request = server.requests[0]
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == "test-anthropic-key"
    assert request.json["model"] == "claude-sonnet-4-5"


def test_openai_route(server):
    server.script(openai_text("hi"))
    provider, model = provider_for("openai/gpt-4.1", env=server.env())
    assert isinstance(provider, OpenAIProvider) and provider.supports_images
    assert ask(provider, model)[-1] == Finished("end_turn", 12, 7)
    request = server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer test-openai-key"
    assert request.json["model"] == "gpt-4.1"


def test_ollama_route_needs_no_key_and_takes_no_images(server):
    server.script(openai_text("hi"))
    env = {"OLLAMA_BASE_URL": server.ollama_base_url}
    provider, model = provider_for("ollama/qwen2.5:7b", env=env)
    assert isinstance(provider, OpenAIProvider) and not provider.supports_images
    assert model == "qwen2.5:7b"
    ask(provider, model)
    request = server.requests[0]
    assert request.path == "/ollama/v1/chat/completions"
    assert "authorization" not in request.headers
    assert request.json["max_tokens"] == 10 and "max_completion_tokens" not in request.json


def test_model_names_may_hold_slashes():
    provider, model = provider_for("ollama/library/llama3.2", env={})
    provider.close()
    assert model == "library/llama3.2"


@pytest.mark.parametrize(
    ("route", "variable"), [("anthropic/claude-x", "ANTHROPIC_API_KEY"), ("openai/gpt-x", "OPENAI_API_KEY")]
)
@pytest.mark.parametrize("env", [{}, {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": ""}])
def test_a_missing_key_names_the_variable(route, variable, env):
    with pytest.raises(MissingApiKey, match=f"set {variable}") as caught:
        provider_for(route, env=env)
    assert caught.value.env_var == variable


@pytest.mark.parametrize("route", ["gemini/gemini-pro", "claude-sonnet-4-5", ""])
def test_an_unknown_provider_is_a_bad_request(route):
    with pytest.raises(BadRequest, match="anthropic/<model>, openai/<model>, ollama/<model>"):
        provider_for(route, env={"ANTHROPIC_API_KEY": "k"})


@pytest.mark.parametrize("route", ["anthropic/", "openai/ ", "ollama"])
def test_a_missing_model_is_an_unknown_model(route):
    with pytest.raises(UnknownModel, match="no model named"):
        provider_for(route, env={"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"})


def test_an_injected_client_is_used_and_left_open(server):
    server.script(anthropic_text("hi"))
    with httpx.Client(headers={"x-trace": "abc"}) as http:
        provider, model = provider_for("anthropic/claude-x", env=server.env(), http=http)
        ask(provider, model)
        assert not http.is_closed
    assert server.requests[0].headers["x-trace"] == "abc"
