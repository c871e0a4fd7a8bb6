"""Azure OpenAI deployments: ``azure/<deployment>`` sends OpenAI's chat completions to the
deployment's path with ``api-version`` and an ``api-key`` header, configured as the official SDK's
AzureOpenAI client is (AZURE_OPENAI_API_KEY, AZURE_OPENAI_ENDPOINT, OPENAI_API_VERSION); the local
server refuses what Azure refuses, with Azure's bodies and statuses."""

import httpx
import pytest

from analyst.turns.agent.providers import (
    AuthenticationFailed,
    AzureOpenAIProvider,
    Finished,
    MissingApiKey,
    MissingSetting,
    TextDelta,
    ToolCall,
    ToolSpec,
    UnknownModel,
    availability,
    provider_for,
)
from analyst.turns.agent.providers.errors import EndpointNotFound
from analyst.turns.agent.providers.router import missing_key
from tests.fakes.model_server import (
    AZURE_API_VERSION_USED,
    AZURE_NO_DEPLOYMENT,
    AZURE_NO_KEY,
    azure_error,
    azure_text,
    openai_tool_call,
)
from tests.turns.agent.asking import ask

DEPLOYMENT = "gpt-test-deployment"
GOOD = f"/openai/deployments/{DEPLOYMENT}/chat/completions?api-version={AZURE_API_VERSION_USED}"
RUN_PYTHON = ToolSpec("run_python", "Run Python.", {"type": "object"})


def test_an_azure_route_streams_from_the_deployment(server):
    server.script(azure_text("Hello there"))
    provider, model = provider_for(f"azure/{DEPLOYMENT}", env=server.env())
    assert isinstance(provider, AzureOpenAIProvider) and model == DEPLOYMENT
    assert ask(provider, model) == [TextDelta("Hello"), TextDelta(" there"), Finished("end_turn", 12, 7)]
    request = server.requests[0]
    assert request.method == "POST"
    assert (
        request.path
        == f"/openai/deployments/{DEPLOYMENT}/chat/completions?api-version={AZURE_API_VERSION_USED}"
    )
    assert request.headers["api-key"] == "test-azure-key" and "authorization" not in request.headers
    assert request.json["max_completion_tokens"] == 10 and "max_tokens" not in request.json


def test_a_tool_call_through_azure(server):
    server.script(openai_tool_call("run_python", {"code": "1 + 1"}))
    provider, model = provider_for(f"azure/{DEPLOYMENT}", env=server.env())
    call, finished = ask(provider, model, tools=[RUN_PYTHON])
    assert isinstance(call, ToolCall) and (call.name, call.arguments) == ("run_python", {"code": "1 + 1"})
    assert finished.stop_reason == "tool_use"
    assert server.requests[0].json["tools"][0]["function"]["name"] == "run_python"


def test_an_endpoint_with_a_trailing_slash(server):
    server.script(azure_text("ok"))
    provider, model = provider_for(
        f"azure/{DEPLOYMENT}", env=server.env(AZURE_OPENAI_ENDPOINT=server.url + "/")
    )
    ask(provider, model)
    assert server.requests[0].path.startswith(f"/openai/deployments/{DEPLOYMENT}/chat/completions?")


def test_an_unknown_deployment_is_an_unknown_model(server):
    provider, model = provider_for("azure/no-such-deployment", env=server.env())
    with pytest.raises(UnknownModel, match="DeploymentNotFound"):
        ask(provider, model)


def test_a_refused_key_is_an_authentication_failure(server):
    # A wrong key (which only Azure can judge) gets the answer a missing one gets.
    server.script(azure_error(401, "401", AZURE_NO_KEY))
    provider, model = provider_for(f"azure/{DEPLOYMENT}", env=server.env(AZURE_OPENAI_API_KEY="wrong"))
    with pytest.raises(AuthenticationFailed, match="Access denied"):
        ask(provider, model)
    assert len(server.requests) == 1


def test_an_endpoint_that_is_not_the_resources_root_names_the_settings(server):
    # AZURE_OPENAI_ENDPOINT set to the full deployment URL, a common mistake: the path doubles.
    endpoint = f"{server.url}/openai/deployments/{DEPLOYMENT}"
    provider, model = provider_for(f"azure/{DEPLOYMENT}", env=server.env(AZURE_OPENAI_ENDPOINT=endpoint))
    with pytest.raises(EndpointNotFound, match="AZURE_OPENAI_ENDPOINT and OPENAI_API_VERSION"):
        ask(provider, model)


# The fake's strictness, request by request, as Azure answers ------------------------------------


def post(server, path: str, headers: dict[str, str]) -> httpx.Response:
    body = {"messages": [{"role": "user", "content": "hi"}], "stream": True}
    return httpx.post(server.url + path, json=body, headers=headers)


@pytest.mark.parametrize("headers", [{}, {"authorization": "Bearer test-azure-key"}, {"api-key": ""}])
def test_the_fake_refuses_a_request_without_an_api_key(server, headers):
    answer = post(server, GOOD, headers)
    assert answer.status_code == 401
    assert answer.json() == {"error": {"code": "401", "message": AZURE_NO_KEY}}


@pytest.mark.parametrize("query", ["", "?api-version=", "?api-version=latest-ish", "?version=2024-10-21"])
def test_the_fake_refuses_a_request_without_an_api_version(server, query):
    answer = post(server, f"/openai/deployments/{DEPLOYMENT}/chat/completions{query}", {"api-key": "k"})
    assert answer.status_code == 404
    assert answer.json() == {"error": {"code": "404", "message": "Resource not found"}}


@pytest.mark.parametrize(
    "path",
    [
        f"/openai/chat/completions?api-version={AZURE_API_VERSION_USED}",
        f"/openai/deployments/{DEPLOYMENT}/completions?api-version={AZURE_API_VERSION_USED}",
        f"/deployments/{DEPLOYMENT}/chat/completions?api-version={AZURE_API_VERSION_USED}",
        f"/openai/openai/deployments/{DEPLOYMENT}/chat/completions?api-version={AZURE_API_VERSION_USED}",
    ],
)
def test_the_fake_refuses_a_wrong_path(server, path):
    answer = post(server, path, {"api-key": "k"})
    assert answer.status_code == 404
    assert answer.json() == {"error": {"code": "404", "message": "Resource not found"}}


def test_the_fake_refuses_an_unknown_deployment(server):
    path = f"/openai/deployments/gpt-other/chat/completions?api-version={AZURE_API_VERSION_USED}"
    answer = post(server, path, {"api-key": "k"})
    assert answer.status_code == 404
    assert answer.json() == {"error": {"code": "DeploymentNotFound", "message": AZURE_NO_DEPLOYMENT}}


# Settings ----------------------------------------------------------------------------------------


def test_a_missing_key_names_the_variable(server):
    with pytest.raises(MissingApiKey, match="set AZURE_OPENAI_API_KEY"):
        provider_for(f"azure/{DEPLOYMENT}", env=server.env(AZURE_OPENAI_API_KEY=""))


@pytest.mark.parametrize("variable", ["AZURE_OPENAI_ENDPOINT", "OPENAI_API_VERSION"])
def test_a_missing_endpoint_or_version_names_the_variable(server, variable):
    # The SDK has no default for either: it refuses to build the client; so do we.
    with pytest.raises(MissingSetting, match=f"set {variable}") as caught:
        provider_for(f"azure/{DEPLOYMENT}", env=server.env(**{variable: ""}))
    assert caught.value.env_var == variable


def test_the_page_says_which_setting_azure_lacks(server):
    env = server.env()
    assert missing_key("azure/d", env) is None and availability.check("azure/d", env=env).usable
    assert missing_key("azure/d", {**env, "AZURE_OPENAI_API_KEY": ""}) == "AZURE_OPENAI_API_KEY"
    no_key = availability.check("azure/d", env={**env, "AZURE_OPENAI_API_KEY": ""})
    assert no_key.reason == "No API key for azure: set AZURE_OPENAI_API_KEY in .env and restart."
    no_version = availability.check("azure/d", env={**env, "OPENAI_API_VERSION": ""})
    assert no_version.reason == "azure needs OPENAI_API_VERSION: set it in .env and restart."
