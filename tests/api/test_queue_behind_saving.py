"""A turn that only saves the kernel lets one question queue behind it; that question is
claimed only once the saving turn has ended, and its end enqueues it."""

from __future__ import annotations

from typing import Any

import pytest

from analyst import dispatch
from analyst.models import Turn
from analyst.turns import turns
from tests.celery_sends import record_sends


def saving_turn(session: Any, user: Any, *, saving: bool = True) -> Turn:
    return Turn.objects.create(
        session=session,
        requested_by=user,
        kind=Turn.Kind.CELL,
        input="x",
        status=Turn.Status.RUNNING,
        saving=saving,
    )


def test_a_question_queues_behind_a_saving_turn(api, session, alice):
    saving_turn(session, alice)
    response = api.post(f"/api/sessions/{session.id}/messages", {"content": "next"}, "application/json")
    assert response.status_code == 202
    assert Turn.objects.get(id=response.json()["turn"]).status == Turn.Status.QUEUED


@pytest.mark.parametrize("endpoint, field", [("messages", "content"), ("cells", "code")])
def test_behind_a_busy_turn_or_a_waiting_one_it_is_still_409(api, session, alice, endpoint, field):
    busy = saving_turn(session, alice, saving=False)
    url = f"/api/sessions/{session.id}/{endpoint}"
    assert api.post(url, {field: "1"}, "application/json").status_code == 409
    Turn.objects.filter(id=busy.id).update(saving=True)
    assert api.post(url, {field: "1"}, "application/json").status_code == 202
    assert api.post(url, {field: "2"}, "application/json").status_code == 409  # one waits, not two
    assert Turn.objects.filter(status=Turn.Status.QUEUED).count() == 1


def test_the_waiting_turn_is_claimed_only_after_the_saving_one_ends(session, alice, monkeypatch):
    enqueued = record_sends(monkeypatch, dispatch.RUN_TURN)
    first = saving_turn(session, alice)
    waiting = Turn.objects.create(session=session, requested_by=alice, kind=Turn.Kind.CHAT, input="q")

    assert turns.claim(waiting.id) is None
    assert Turn.objects.get(id=waiting.id).status == Turn.Status.QUEUED
    turns.dispatch_next(session.id)
    assert enqueued == [waiting.id], "it is enqueued again, and the claim still waits"
    assert turns.claim(waiting.id) is None
    assert turns.finish(first, Turn.Status.DONE)
    assert Turn.objects.get(id=first.id).saving is False
    claimed = turns.claim(waiting.id)
    assert claimed is not None and claimed.status == Turn.Status.RUNNING
    assert turns.claim(waiting.id) is None, "a second delivery finds it taken"
