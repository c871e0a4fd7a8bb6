"""What the per-user limits count: a turn on its way to the queue runs, one the queue did not take
waits (not running); a replay's cells count as they run, as cells sent by hand do."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from analyst.accounts import limits
from analyst.models import Turn
from analyst.realtime import events


def test_a_turn_being_sent_runs_and_one_the_queue_did_not_take_waits(session, alice, settings):
    settings.ANALYST_LIMIT_CONCURRENT_TURNS = 1
    stored = Turn.objects.create(session=session, requested_by=alice, kind=Turn.Kind.CHAT, input="?")
    with pytest.raises(limits.LimitReached) as refused:  # its send is in flight: it takes the place
        limits.check_turn(alice, kind=Turn.Kind.CHAT)
    assert refused.value.code == "concurrent_turns"

    later = timezone.now() + limits.SEND_GRACE + dt.timedelta(seconds=1)
    limits.check_turn(alice, kind=Turn.Kind.CHAT, now=later)  # unsent since: it waits, it does not run
    assert limits.waiting_turns(alice, now=later) == 1 and limits.unfinished_turns(alice, now=later) == 0

    Turn.objects.filter(id=stored.id).update(enqueued_at=later)  # the reconciler sent it
    with pytest.raises(limits.LimitReached):
        limits.check_turn(alice, kind=Turn.Kind.CHAT, now=later)


def test_a_replays_cells_count_against_the_cells_per_minute(session, alice, settings):
    settings.ANALYST_LIMIT_CONCURRENT_TURNS = 0
    settings.ANALYST_LIMIT_CELLS_PER_MINUTE = 2
    replay = Turn.objects.create(
        session=session, requested_by=alice, kind=Turn.Kind.REPLAY, input="{}", status=Turn.Status.RUNNING
    )
    for code in ("a = 1", "b = 2"):
        events.append(
            session.id, "cell", {"code": code, "replay": {"index": 1, "of": 2, "by": "user"}}, turn=replay
        )
    events.append(session.id, "tool_call", {"code": "c = 3"}, turn=replay)  # the model's: not counted

    with pytest.raises(limits.LimitReached) as refused:
        limits.check_turn(alice, kind=Turn.Kind.CELL)
    assert refused.value.code == "cells_per_minute"
    assert 0 < limits.cell_wait(alice) <= 60

    replay.events.update(created_at=timezone.now() - dt.timedelta(seconds=61))
    assert limits.cell_wait(alice) == 0
    limits.check_turn(alice, kind=Turn.Kind.CELL)
