"""Personas (alice owns, mallory is a stranger) and their API clients, as the API's tests have
them; a sandboxd that cannot be reached, for what must not need one; connections made directly."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest
from django.test import Client

from analyst.connections import registry
from analyst.models import Connection
from tests.api.conftest import alice, api, bearer_client, mallory, media, session, stranger_api

__all__ = ["alice", "api", "bearer_client", "mallory", "media", "session", "stranger_api"]

SECRET = "pw-Zq8!s3cr3t"
WAREHOUSE = {
    "name": "warehouse",
    "kind": "postgres",
    "url": "postgresql://analyst@db.internal:5432/sales",
    "secret": SECRET,
    "read_only": True,
}


@pytest.fixture
def no_sandboxd(monkeypatch: pytest.MonkeyPatch) -> str:
    """SANDBOXD_URL at a loopback port where nothing listens: a sandbox asked for is refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    monkeypatch.setenv("SANDBOXD_URL", url)
    return url


def post_json(client: Client, path: str, body: dict[str, Any]) -> Any:
    return client.post(path, json.dumps(body), "application/json")


def patch_json(client: Client, path: str, body: dict[str, Any]) -> Any:
    return client.patch(path, json.dumps(body), "application/json")


def make_connection(owner: Any, **fields: Any) -> Connection:
    return registry.do_create(owner=owner, fields={**WAREHOUSE, **fields})
