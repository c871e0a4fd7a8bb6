"""What the provider tests share: a scripted model server speaking each provider's wire format,
and the sleeps a provider would have taken between retries (recorded, not slept)."""

from collections.abc import Iterator

import pytest

from tests.fakes.model_server import ScriptedModelServer


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as server:
        yield server


@pytest.fixture
def sleeps() -> list[float]:
    return []
