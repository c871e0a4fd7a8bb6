"""The reconciler's rules, on a real database: lapsed leases end, lost messages are sent again,
turns queued too long end with a reason, a turn waiting behind another is left alone, and a run
that ended is reported.

The broker is the one edge replaced here (what would be sent is recorded); tests/faults runs the
same rules in real workers against a real Redis.
"""

import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from analyst import dispatch
from analyst.models import AnalysisSession, Run, Turn
from analyst.ops import metrics
from analyst.realtime import events
from analyst.turns import reconciler, turns
from tests.celery_sends import record_sends

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Turn ids handed to the broker."""
    return record_sends(monkeypatch, dispatch.RUN_TURN)


@pytest.fixture
def session() -> AnalysisSession:
    owner = get_user_model().objects.create_user("alice")
    return AnalysisSession.objects.create(owner=owner, model="anthropic/claude-test")


def make_turn(session: AnalysisSession, *, age: float, **fields: Any) -> Turn:
    turn = Turn.objects.create(session=session, requested_by=session.owner, kind="chat", input="q", **fields)
    Turn.objects.filter(id=turn.id).update(created_at=timezone.now() - timedelta(seconds=age))
    turn.refresh_from_db()
    return turn


def ago(seconds: float):
    return timezone.now() - timedelta(seconds=seconds)


def terminal(session: AnalysisSession) -> list[tuple[str, dict]]:
    return [(e["type"], e["payload"]) for e in events.after(session.id, 0) if e["type"].startswith("turn_")]


def test_a_turn_never_sent_is_sent_once(session, sent, settings):
    turn = make_turn(session, age=10)  # the broker was down when it was asked
    assert reconciler.reconcile()["requeued"] == 1
    assert sent == [turn.id]
    reconciler.reconcile()
    assert sent == [turn.id], "sent again only after ANALYST_REQUEUE_AFTER"
    turn.refresh_from_db()
    assert turn.enqueued_at is not None


def test_a_turn_just_asked_is_left_to_the_web_process(session, sent):
    make_turn(session, age=0)
    assert reconciler.reconcile()["requeued"] == 0
    assert sent == []


def test_a_turn_sent_long_ago_and_never_started_is_sent_again(session, sent, settings):
    settings.ANALYST_REQUEUE_AFTER = 30
    lost = make_turn(session, age=40, enqueued_at=ago(35))  # Redis restarted: its message is gone
    other = AnalysisSession.objects.create(owner=session.owner, model=session.model)
    recent = make_turn(other, age=20, enqueued_at=ago(20))  # still plausibly in the queue
    reconciler.reconcile()
    assert sent == [lost.id]
    assert recent.id not in sent


def test_a_turn_waiting_behind_an_unfinished_one_is_left_alone(session, sent, settings):
    settings.ANALYST_QUEUED_MAX = 60
    make_turn(session, age=100, status=Turn.Status.RUNNING, saving=True, lease_expires_at=ago(-30))
    behind = make_turn(session, age=90)
    assert reconciler.reconcile() == {
        "failed_orphan": 0,
        "expired": 0,
        "requeued": 0,
        "placement_resent": 0,
        "run_reports_sent": 0,
    }
    behind.refresh_from_db()
    assert behind.status == Turn.Status.QUEUED and sent == []


def test_a_turn_queued_too_long_ends_with_a_reason_and_the_next_is_sent(session, sent, settings):
    settings.ANALYST_QUEUED_MAX = 600
    stale = make_turn(session, age=700, enqueued_at=ago(700))
    assert reconciler.reconcile()["expired"] == 1
    stale.refresh_from_db()
    assert stale.status == Turn.Status.FAILED
    ((kind, payload),) = terminal(session)
    assert kind == "turn_failed" and "within 10 min" in payload["reason"] and "usage" in payload


def test_a_lapsed_lease_ends_the_turn_with_its_usage_and_sends_the_next(session, sent, settings):
    settings.ANALYST_REDIS_PREFIX = f"test-reconciler-{uuid.uuid4()}"  # metrics of this test only
    orphan = make_turn(
        session, age=60, status=Turn.Status.RUNNING, started_at=ago(50), lease_expires_at=ago(5)
    )
    waiting = make_turn(session, age=1, enqueued_at=ago(1))
    assert reconciler.reconcile()["failed_orphan"] == 1
    orphan.refresh_from_db()
    assert orphan.status == Turn.Status.FAILED
    ((kind, payload),) = terminal(session)
    assert kind == "turn_failed" and payload["usage"]["calls"] == 0
    assert sent == [waiting.id], "the turn that waited behind it is sent at once"
    scraped = metrics.exposition().decode()
    assert 'analyst_turn_seconds_count{outcome="failed"} 1.0' in scraped, "the orphan's time is measured"
    assert 'analyst_reconciler_actions_total{action="failed_orphan"} 1.0' in scraped


def test_stop_on_a_turn_whose_worker_died_ends_it_at_once(session, sent):
    orphan = make_turn(session, age=60, status=Turn.Status.RUNNING, lease_expires_at=ago(1))
    assert turns.do_cancel(session=session).id == orphan.id
    orphan.refresh_from_db()
    assert orphan.status == Turn.Status.CANCELLED
    assert [kind for kind, _ in terminal(session)] == ["turn_cancelled"]
    turns.check_can_start(session)  # the session takes questions again


def test_stop_on_a_live_turn_only_asks_it_to_stop(session, sent):
    live = make_turn(session, age=5, status=Turn.Status.RUNNING, lease_expires_at=ago(-10))
    turns.do_cancel(session=session)
    live.refresh_from_db()
    assert live.status == Turn.Status.RUNNING and live.cancel_requested
    assert terminal(session) == []


def test_a_run_that_ended_is_reported_once(session, monkeypatch, settings):
    settings.ANALYST_REQUEUE_AFTER = 30
    reports = record_sends(monkeypatch, reconciler.REPORT_RUN)

    def run(status: str, **fields: Any) -> Run:
        own = AnalysisSession.objects.create(owner=session.owner, model=session.model)
        turn = make_turn(own, age=5, status=status)
        return Run.objects.create(
            source=session, session=own, turn=turn, requested_by=session.owner, **fields
        )

    ended = run(Turn.Status.DONE)
    run(Turn.Status.RUNNING)  # not yet
    run(Turn.Status.FAILED, reported=True)  # reported before
    assert reconciler.reconcile()["run_reports_sent"] == 1
    assert reports == [str(ended.id)]
    reconciler.reconcile()
    assert reports == [str(ended.id)], "sent again only after ANALYST_REQUEUE_AFTER"
    Run.objects.filter(id=ended.id).update(report_sent_at=ago(40))  # its task was lost
    reconciler.reconcile()
    assert reports == [str(ended.id)] * 2
