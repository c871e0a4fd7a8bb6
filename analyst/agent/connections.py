"""Connections a worker process keeps across turns: one HTTP client for the model providers,
and the session sandboxes it has connected to (each with its own kept-alive connection)."""

from __future__ import annotations

import os
from collections import OrderedDict

import httpx

from analyst.agent.providers import Provider, provider_for
from analyst.agent.providers.http import new_http_client
from sandboxes import Sandbox

KEPT_SANDBOXES = 32


class _PerProcess:
    """Values made again in a forked child (Celery's prefork pool forks after import)."""

    def __init__(self) -> None:
        self.pid = -1
        self.http: httpx.Client | None = None
        self.sandboxes: OrderedDict[str, Sandbox] = OrderedDict()

    def fresh(self) -> _PerProcess:
        if self.pid != os.getpid():
            self.pid, self.http, self.sandboxes = os.getpid(), None, OrderedDict()
        return self


_state = _PerProcess()


def provider(route: str) -> tuple[Provider, str]:
    """provider_for, over this process's shared HTTP client (connections to the API are reused)."""
    state = _state.fresh()
    if state.http is None:
        state.http = new_http_client()
    return provider_for(route, http=state.http)


def sandbox(sandbox_id: str) -> Sandbox:
    """A connected Sandbox, reused while this process keeps it. Raises as Sandbox.connect does."""
    state = _state.fresh()
    kept = state.sandboxes.pop(sandbox_id, None) or Sandbox.connect(sandbox_id)
    state.sandboxes[sandbox_id] = kept
    _trim(state)
    return kept


def keep(sandbox: Sandbox) -> Sandbox:
    """Keep a sandbox this process just created, for the turns that follow."""
    state = _state.fresh()
    state.sandboxes[sandbox.sandbox_id] = sandbox
    _trim(state)
    return sandbox


def _trim(state: _PerProcess) -> None:
    while len(state.sandboxes) > KEPT_SANDBOXES:
        state.sandboxes.popitem(last=False)[1].close()


def forget(sandbox_id: str) -> None:
    """Drop a sandbox that turned out to be gone."""
    kept = _state.fresh().sandboxes.pop(sandbox_id, None)
    if kept is not None:
        kept.close()
