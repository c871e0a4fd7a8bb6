"""The pages' tests: alice, her logged-in browser, and a session of hers with one question."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from analyst.models import AnalysisSession
from analyst.realtime import events


@pytest.fixture
def alice():
    return get_user_model().objects.create_user("alice", password="a-long-passphrase")


@pytest.fixture
def browser(alice) -> Client:
    client = Client()
    client.force_login(alice)
    return client


@pytest.fixture
def session(alice) -> AnalysisSession:
    session = AnalysisSession.objects.create(owner=alice, model="anthropic/claude-test", title="Sales")
    events.append(session.id, "user_message", {"text": "What sells?"})
    return session
