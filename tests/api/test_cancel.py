"""Stopping: nothing to stop, a queued turn (ended here), a running one (left to its worker)."""

from __future__ import annotations

from analyst.models import Event, Turn
from analyst.realtime import events


def cancel(client, session):
    return client.post(f"/api/sessions/{session.id}/cancel")


def test_with_nothing_running_the_answer_is_null(api, session, alice):
    Turn.objects.create(session=session, requested_by=alice, kind="chat", input="x", status=Turn.Status.DONE)
    response = cancel(api, session)
    assert response.status_code == 200
    assert response.json() == {"turn": None}
    assert not Event.objects.exists()


def test_a_queued_turn_is_cancelled_with_an_event(api, session):
    api.post(f"/api/sessions/{session.id}/messages", {"content": "slow question"}, "application/json")
    turn = Turn.objects.get()
    assert turn.status == Turn.Status.QUEUED

    response = cancel(api, session)
    assert response.status_code == 200
    assert response.json() == {"turn": turn.id}
    turn.refresh_from_db()
    assert turn.status == Turn.Status.CANCELLED
    assert turn.cancel_requested is True
    assert turn.finished_at is not None
    log = events.after(session.id, 0)
    assert [(e["seq"], e["type"], e["turn"]) for e in log] == [
        (1, "user_message", turn.id),
        (2, "turn_cancelled", turn.id),
    ]
    assert (
        api.post(f"/api/sessions/{session.id}/messages", {"content": "again"}, "application/json").status_code
        == 202
    )


def test_cancelling_twice_ends_the_turn_once(api, session):
    api.post(f"/api/sessions/{session.id}/messages", {"content": "q"}, "application/json")
    first, second = cancel(api, session), cancel(api, session)
    assert first.json()["turn"] is not None
    assert second.json() == {"turn": None}
    assert [e["type"] for e in events.after(session.id, 0)] == ["user_message", "turn_cancelled"]


def test_a_running_turn_is_asked_to_stop_and_its_worker_records_the_end(api, session, alice):
    turn = Turn.objects.create(
        session=session, requested_by=alice, kind="chat", input="x", status=Turn.Status.RUNNING
    )
    response = cancel(api, session)
    assert response.json() == {"turn": turn.id}
    turn.refresh_from_db()
    assert (turn.status, turn.cancel_requested) == (Turn.Status.RUNNING, True)
    assert not Event.objects.exists()
