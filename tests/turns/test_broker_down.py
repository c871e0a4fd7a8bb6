"""Asking while the broker (Redis) is unreachable: the question is stored and the API says it will
run (503 JSON, not an HTML 500); the reconciler sends it once the broker answers again."""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from analyst import dispatch
from analyst.models import AnalysisSession, ApiToken, Turn
from analyst.realtime import events
from analyst.turns import reconciler
from tests.celery_sends import record_sends

pytestmark = pytest.mark.django_db(transaction=True)  # on_commit must run


@pytest.fixture
def api() -> tuple[Client, AnalysisSession]:
    alice = get_user_model().objects.create_user("alice")
    _, secret = ApiToken.issue(alice)
    session = AnalysisSession.objects.create(owner=alice, model="anthropic/claude-test")
    return Client(HTTP_AUTHORIZATION=f"Bearer {secret}"), session


def test_asking_while_the_broker_is_down_keeps_the_question_and_says_so(api, broker_down):
    client, session = api
    response = client.post(
        f"/api/sessions/{session.id}/messages", {"content": "Still there?"}, "application/json"
    )
    assert response.status_code == 503
    assert response["content-type"] == "application/json"
    body = response.json()
    assert body["error"]["code"] == "queue_unavailable"
    assert "will run as soon as" in body["error"]["message"]
    turn = Turn.objects.get(id=body["turn"])
    assert turn.status == Turn.Status.QUEUED and turn.enqueued_at is None
    assert [e["type"] for e in events.after(session.id, 0)] == ["user_message"], "the question is in the log"


def test_once_the_broker_is_back_the_reconciler_sends_it(api, broker_down, monkeypatch):
    client, session = api
    turn_id = client.post(f"/api/sessions/{session.id}/cells", {"code": "1 + 1"}, "application/json").json()[
        "turn"
    ]
    Turn.objects.filter(id=turn_id).update(created_at=timezone.now() - timedelta(seconds=10))
    assert reconciler.reconcile()["requeued"] == 0, "nothing is sent while the broker is down"
    assert Turn.objects.get(id=turn_id).enqueued_at is None, "so the next pass tries again"

    monkeypatch.undo()  # the broker answers again: record what the real publish would send
    sent = record_sends(monkeypatch, dispatch.RUN_TURN)
    assert reconciler.reconcile()["requeued"] == 1
    assert sent == [turn_id]
