"""The integration package's stack (a real Celery worker on real Redis, a real sandboxd, the
scripted model server), here for this package alone; and a stranger, mallory, for the API's tests."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.api.conftest import bearer_client
from tests.fakes.model_server import ScriptedModelServer
from tests.integration.conftest import alice, api, session, stack, worker, worker_env

__all__ = ["alice", "api", "session", "stack", "worker", "worker_env"]


@pytest.fixture(scope="package")
def model_server() -> Any:
    with ScriptedModelServer(expect_all_used=False) as server:
        yield server


@pytest.fixture
def mallory(db: None) -> Any:
    return get_user_model().objects.create_user("mallory")


@pytest.fixture
def stranger_api(mallory: Any) -> Client:
    return bearer_client(mallory)
