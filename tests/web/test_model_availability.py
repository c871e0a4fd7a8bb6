"""Which models can answer here: a key for hosted providers, an Ollama server that answers;
the pages list only those, and say why the session's own model cannot answer."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from analyst.models import AnalysisSession
from analyst.turns.agent.providers import availability
from tests.sandboxd_process import free_port

MODELS = ["anthropic/claude-test", "openai/gpt-test", "ollama/qwen-test"]


class _Ollama(BaseHTTPRequestHandler):
    """Ollama's OpenAI-compatible listing, as `GET /v1/models` answers it; nothing else."""

    def do_GET(self) -> None:
        if self.path != "/v1/models":
            self.send_error(404)
            return
        body = json.dumps({"object": "list", "data": [{"id": "qwen-test", "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class OllamaStandIn:
    def __init__(self) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Ollama)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        ).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def ollama_server() -> Iterator[OllamaStandIn]:
    stand_in = OllamaStandIn()
    yield stand_in
    stand_in.stop()


@pytest.fixture
def ollama(ollama_server: OllamaStandIn) -> str:
    """A stand-in Ollama server's OpenAI-style base URL."""
    return ollama_server.url


@pytest.fixture(autouse=True)
def fresh_answers() -> Iterator[None]:
    availability.forget()
    yield
    availability.forget()


@pytest.fixture
def configured(monkeypatch: pytest.MonkeyPatch, settings: Any) -> pytest.MonkeyPatch:
    """Three models configured; no key and no Ollama until the test sets them."""
    settings.ANALYST_MODELS = MODELS
    settings.ANALYST_DEFAULT_MODEL = MODELS[0]
    for variable in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("OLLAMA_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")  # nothing listens
    return monkeypatch


def test_hosted_providers_need_their_key():
    no_key = availability.check("anthropic/claude-test", env={})
    assert not no_key.usable
    assert no_key.reason == "No API key for anthropic: set ANTHROPIC_API_KEY in .env and restart."
    assert availability.check("anthropic/claude-test", env={"ANTHROPIC_API_KEY": "k"}).usable
    assert availability.check("openai/gpt-test", env={"ANTHROPIC_API_KEY": "k"}).reason == (
        "No API key for openai: set OPENAI_API_KEY in .env and restart."
    )


def test_ollama_counts_when_its_server_answers_and_the_answer_is_remembered(ollama):
    assert availability.check("ollama/qwen-test", env={"OLLAMA_BASE_URL": ollama}).usable
    quiet = f"http://127.0.0.1:{free_port()}/v1"
    silent = availability.check("ollama/qwen-test", env={"OLLAMA_BASE_URL": quiet})
    assert silent.reason == f"The Ollama server at {quiet} does not answer."
    not_ollama = ollama.removesuffix("/v1")  # answers, but 404 for /models
    assert not availability.check("ollama/qwen-test", env={"OLLAMA_BASE_URL": not_ollama}).usable


def test_an_answer_is_remembered_until_forgotten(ollama_server):
    env = {"OLLAMA_BASE_URL": ollama_server.url}
    assert availability.check("ollama/qwen-test", env=env).usable
    ollama_server.stop()
    assert availability.check("ollama/qwen-test", env=env).usable, "the next page load does not ask again"
    availability.forget()
    assert not availability.check("ollama/qwen-test", env=env).usable


@pytest.fixture
def alice(db: None) -> Any:
    return get_user_model().objects.create_user("alice", password="a-long-passphrase")


@pytest.fixture
def browser(alice: Any) -> Client:
    client = Client()
    client.force_login(alice)
    return client


def options(html: str) -> list[str]:
    picker = re.search(r'<select name="model"[^>]*>(.*?)</select>', html, re.S)
    return re.findall(r'<option value="([^"]+)"', picker.group(1)) if picker else []


def app_attributes(html: str) -> dict[str, str]:
    root = re.search(r'<main id="app"([^>]*)>', html)
    assert root, "the page has no #app root"
    return dict(re.findall(r'data-([a-z-]+)="([^"]*)"', root.group(1)))


def test_the_new_session_form_lists_only_models_that_can_answer(browser, configured, ollama):
    page = browser.get("/sessions/").content.decode()
    assert options(page) == []
    assert 'data-testid="no-model"' in page and "set ANTHROPIC_API_KEY in .env" in page

    configured.setenv("OPENAI_API_KEY", "sk-test")
    configured.setenv("OLLAMA_BASE_URL", ollama)
    availability.forget()
    page = browser.get("/sessions/").content.decode()
    assert options(page) == ["openai/gpt-test", "ollama/qwen-test"]
    assert re.search(r'<option value="openai/gpt-test" selected>', page), "the first usable is chosen"
    assert 'data-testid="no-model"' not in page


def test_the_session_page_lists_usable_models_and_says_why_its_own_cannot_answer(browser, alice, configured):
    session = AnalysisSession.objects.create(owner=alice, model="anthropic/claude-test")
    configured.setenv("OPENAI_API_KEY", "sk-test")
    attributes = app_attributes(browser.get(f"/sessions/{session.id}/").content.decode())
    assert json.loads(attributes["models"].replace("&quot;", '"')) == ["openai/gpt-test"]
    assert attributes["model"] == "anthropic/claude-test"
    assert attributes["model-unavailable"] == (
        "No API key for anthropic: set ANTHROPIC_API_KEY in .env and restart."
    )

    detail = browser.patch(f"/api/sessions/{session.id}", {"model": "openai/gpt-test"}, "application/json")
    assert detail.json()["model_unavailable"] is None
    attributes = app_attributes(browser.get(f"/sessions/{session.id}/").content.decode())
    assert attributes["model-unavailable"] == ""


def test_the_api_still_takes_a_question_for_a_model_without_a_key(browser, alice, configured):
    session = AnalysisSession.objects.create(owner=alice, model="anthropic/claude-test")
    response = browser.post(f"/api/sessions/{session.id}/messages", {"content": "hi"}, "application/json")
    assert response.status_code == 202  # the turn then ends with its missing_api_key error
