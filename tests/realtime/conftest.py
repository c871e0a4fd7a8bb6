"""The owner and their session (three events stored) for the WebSocket tests."""

import pytest
import pytest_asyncio
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model
from django.db import connections

from analyst.models import AnalysisSession
from analyst.realtime import events


@pytest_asyncio.fixture(autouse=True)
async def close_consumer_connections():
    """The consumer's queries run in a worker thread whose connection would outlive the test
    (and keep Postgres from dropping the test database)."""
    yield
    await database_sync_to_async(connections.close_all)()


@pytest.fixture
def owner_and_session():
    owner = get_user_model().objects.create_user("owner")
    session = AnalysisSession.objects.create(owner=owner, model="anthropic/claude-test")
    for n in range(3):
        events.append(session.id, "stdout", {"text": f"{n}\n"})
    return owner, session
