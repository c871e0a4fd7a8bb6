"""Personas for the audit log (alice owns her personal workspace, mallory is a stranger), their API
clients each calling from an address of its own, and what the log holds."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from analyst.models import AuditEntry, Workspace
from tests.api.conftest import alice, bearer_client, mallory, media, session
from tests.connections.conftest import no_sandboxd

__all__ = ["alice", "mallory", "media", "no_sandboxd", "session"]

ALICE_ADDRESS = "127.0.0.7"
MALLORY_ADDRESS = "127.0.0.9"


@pytest.fixture
def api(alice: Any) -> Client:
    return bearer_client(alice, REMOTE_ADDR=ALICE_ADDRESS)


@pytest.fixture
def stranger_api(mallory: Any) -> Client:
    return bearer_client(mallory, REMOTE_ADDR=MALLORY_ADDRESS)


@pytest.fixture
def personal(alice: Any) -> Workspace:
    return Workspace.objects.get(personal_of=alice)


def post_json(client: Client, path: str, body: dict[str, Any]) -> Any:
    return client.post(path, json.dumps(body), "application/json")


def recorded(action: str) -> list[AuditEntry]:
    return list(AuditEntry.objects.filter(action=action).order_by("id"))


def only(action: str) -> AuditEntry:
    """The one entry of ``action``: recorded once, never twice."""
    found = recorded(action)
    assert len(found) == 1, f"{action}: {[(e.username, e.target, e.detail) for e in found]}"
    return found[0]
