"""The answer's length limit goes in the field the server reads: OpenAI's own API takes
``max_completion_tokens`` (its reasoning models refuse ``max_tokens``), while OpenAI-compatible
servers (Ollama, vLLM, LM Studio) read ``max_tokens`` and silently ignore the other."""

import pytest

from analyst.turns.agent.providers import (
    BadRequest,
    OpenAIProvider,
    TextDelta,
    provider_for,
)
from analyst.turns.agent.providers.openai import max_tokens_field_for
from tests.fakes.loopback import loopback_client
from tests.fakes.model_server import openai_text
from tests.turns.agent.asking import ask


def test_an_openai_route_at_a_compatible_server_sends_max_tokens(server):
    # OPENAI_BASE_URL at a vLLM or LM Studio server on this machine, as the docs suggest.
    server.script(openai_text("hi"))
    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.openai_base_url}
    provider, model = provider_for("openai/Qwen/Qwen2.5-7B-Instruct", env=env)
    assert ask(provider, model)[0] == TextDelta("hi")
    body = server.requests[0].json
    assert body["max_tokens"] == 10 and "max_completion_tokens" not in body


@pytest.mark.parametrize("model", ["gpt-4.1", "o4-mini"])
def test_openais_own_api_gets_max_completion_tokens(server, model):
    # No OPENAI_BASE_URL: the default https://api.openai.com/v1, delivered to the local server.
    server.script(openai_text("hi"))
    with loopback_client(server.url) as http:
        provider, name = provider_for(f"openai/{model}", env={"OPENAI_API_KEY": "k"}, http=http)
        assert ask(provider, name)[0] == TextDelta("hi")
    request = server.requests[0]
    assert request.headers["host"] == "api.openai.com" and request.path == "/v1/chat/completions"
    assert request.json["max_completion_tokens"] == 10 and "max_tokens" not in request.json


def test_the_fake_refuses_max_tokens_for_a_reasoning_model_as_openai_does(server):
    # The strictness the test above leans on: a provider sending max_tokens to o4-mini is refused.
    with loopback_client(server.url) as http:
        provider = OpenAIProvider("k", http=http, max_tokens_field="max_tokens", sleep=lambda _: None)
        with pytest.raises(BadRequest, match="Use 'max_completion_tokens' instead"):
            ask(provider, "o4-mini")


@pytest.mark.parametrize(
    ("base_url", "field"),
    [
        ("https://api.openai.com/v1", "max_completion_tokens"),
        ("https://API.OpenAI.com/v1/", "max_completion_tokens"),
        ("https://us.api.openai.com/v1", "max_completion_tokens"),
        ("http://127.0.0.1:11434/v1", "max_tokens"),
        ("http://localhost:1234/v1", "max_tokens"),
        ("http://vllm.internal:8000/v1", "max_tokens"),
        ("https://openrouter.ai/api/v1", "max_tokens"),
        ("https://api.openai.com.example.net/v1", "max_tokens"),
        ("https://notapi.openai.com/v1", "max_tokens"),
    ],
)
def test_which_hosts_count_as_openais_own(base_url, field):
    assert max_tokens_field_for(base_url) == field
