"""The turns-at-once limit holds against requests that arrive together in two of a user's sessions:
each session's row lock alone let both pass on Postgres (SQLite serialises whole write
transactions, so it held there by accident). Run on Postgres by `make test-postgres`."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client

from analyst import dispatch
from analyst.accounts import limits
from analyst.models import AnalysisSession, ApiToken, Turn
from tests.celery_sends import record_sends

pytestmark = [pytest.mark.database, pytest.mark.django_db(transaction=True)]


def counted_together(monkeypatch: pytest.MonkeyPatch, parties: int) -> None:
    """Each request, once it has counted the user's running turns, waits for the others to have
    counted too: the worst interleaving, every time. Where the code serialises the requests, the
    others cannot count before this one ends, and the wait gives up (a broken barrier, not an
    error): the request goes on alone."""
    rendezvous = threading.Barrier(parties, timeout=5)
    count = limits.unfinished_turns

    def count_then_wait(user: Any, **kwargs: Any) -> int:
        counted = count(user, **kwargs)
        try:
            rendezvous.wait()
        except threading.BrokenBarrierError:
            pass
        return counted

    monkeypatch.setattr(limits, "unfinished_turns", count_then_wait)


def ask_at_once(clients: list[tuple[Client, AnalysisSession]]) -> list[int]:
    """One question per session, each from its own thread (its own database connection), all
    released together; the HTTP status of each."""
    start = threading.Barrier(len(clients))
    statuses: list[int] = [0] * len(clients)

    def ask(index: int, client: Client, session: AnalysisSession) -> None:
        try:
            start.wait()
            url = f"/api/sessions/{session.id}/messages"
            statuses[index] = client.post(url, {"content": "And?"}, "application/json").status_code
        finally:
            connection.close()

    threads = [threading.Thread(target=ask, args=(i, *pair)) for i, pair in enumerate(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return statuses


def test_questions_in_two_sessions_at_once_take_one_place_not_two(settings, monkeypatch):
    settings.ANALYST_LIMIT_CONCURRENT_TURNS = 1
    sent = record_sends(monkeypatch, dispatch.RUN_TURN)
    counted_together(monkeypatch, parties=2)
    alice = get_user_model().objects.create_user("alice")
    sessions = [AnalysisSession.objects.create(owner=alice, model="anthropic/claude-test") for _ in range(2)]
    clients = [(Client(HTTP_AUTHORIZATION=f"Bearer {ApiToken.issue(alice)[1]}"), s) for s in sessions]

    statuses = ask_at_once(clients)

    assert sorted(statuses) == [202, 429], f"{statuses}: both passed a limit of 1"
    assert Turn.objects.count() == 1 and len(sent) == 1
