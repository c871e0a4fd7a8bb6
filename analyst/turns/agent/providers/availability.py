"""Which models can answer here: a hosted provider's needs its key, Ollama's needs a server that
answers. Pages ask this on every load, so a server's answer is kept for a few seconds and a
silent one costs at most a short timeout."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import httpx

from analyst.turns.agent.providers.router import DEFAULT_OLLAMA_URL, KEY_VARIABLES, missing_key

PROBE_TIMEOUT = httpx.Timeout(0.75, connect=0.5)
REMEMBER_SECONDS = 10.0

_answers: dict[str, tuple[float, bool]] = {}  # base URL -> (when asked, answered)
_lock = threading.Lock()


@dataclass(frozen=True)
class Availability:
    model: str
    reason: str = ""  # why it cannot answer here, as the page says it; "" when it can

    @property
    def usable(self) -> bool:
        return not self.reason


def check(
    model: str, *, env: Mapping[str, str] = os.environ, http: httpx.Client | None = None
) -> Availability:
    """Whether ``model`` (a router string) can answer, and if not, why in a sentence."""
    provider = model.strip().partition("/")[0]
    if provider in KEY_VARIABLES:
        variable = missing_key(model, env)
        if variable is None:
            return Availability(model)
        if variable == KEY_VARIABLES[provider]:
            return Availability(model, f"No API key for {provider}: set {variable} in .env and restart.")
        return Availability(model, f"{provider} needs {variable}: set it in .env and restart.")
    if provider == "ollama":
        base_url = (env.get("OLLAMA_BASE_URL") or DEFAULT_OLLAMA_URL).rstrip("/")
        if answers(base_url, http=http):
            return Availability(model)
        return Availability(model, f"The Ollama server at {base_url} does not answer.")
    return Availability(model, f"{model} names no known provider.")


def usable(models: Iterable[str], *, env: Mapping[str, str] = os.environ) -> list[str]:
    """The ``models`` that can answer here, in their order."""
    return [model for model in models if check(model, env=env).usable]


def answers(base_url: str, *, http: httpx.Client | None = None) -> bool:
    """Whether an OpenAI-style server answers ``GET <base_url>/models`` (remembered briefly)."""
    now = time.monotonic()
    with _lock:
        remembered = _answers.get(base_url)
    if remembered is not None and now - remembered[0] < REMEMBER_SECONDS:
        return remembered[1]
    answered = _probe(base_url, http)
    with _lock:
        _answers[base_url] = (time.monotonic(), answered)
    return answered


def forget() -> None:
    """Drop every remembered answer (tests; a server that just came up)."""
    with _lock:
        _answers.clear()


def _probe(base_url: str, http: httpx.Client | None) -> bool:
    try:
        if http is not None:
            response = http.get(f"{base_url}/models", timeout=PROBE_TIMEOUT)
        else:
            response = httpx.get(f"{base_url}/models", timeout=PROBE_TIMEOUT)
    except httpx.HTTPError:
        return False
    return response.status_code == 200


__all__ = ["Availability", "answers", "check", "forget", "usable"]
