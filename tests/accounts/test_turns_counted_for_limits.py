"""What the per-user limits count: a turn on its way to the queue runs, one the queue did not take
waits (not running)."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from analyst.accounts import limits
from analyst.models import Turn


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
