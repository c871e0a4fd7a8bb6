"""Operations tests: Redis keys of their own, a port nobody listens on, sandboxd's address."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from analyst.lib.redis import redis_client
from tests.sandboxd_process import SandboxdProcess, free_port


@pytest.fixture
def redis_keys(settings: Any) -> Iterator[str]:
    """A Redis key prefix for this test alone (test runs share one Redis), emptied afterwards."""
    prefix = settings.ANALYST_REDIS_PREFIX = f"test-ops-{uuid.uuid4().hex}"
    client = redis_client(settings.REDIS_URL)  # the real one, whatever the test points at
    yield prefix
    for key in client.scan_iter(match=f"{prefix}:*"):
        client.delete(key)


@pytest.fixture
def with_sandboxd(settings: Any, sandboxd: SandboxdProcess) -> SandboxdProcess:
    """The web side's settings point at the run's real sandboxd."""
    settings.SANDBOXD_URL = sandboxd.url
    settings.SANDBOXD_TOKEN = sandboxd.token
    return sandboxd


@pytest.fixture
def closed_url() -> str:
    """An address on 127.0.0.1 where nothing listens."""
    return f"127.0.0.1:{free_port()}"
