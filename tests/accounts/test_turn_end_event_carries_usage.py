"""Each turn's end event carries what its model calls used: tokens, calls and the cost estimate."""

from __future__ import annotations

import pytest

from analyst.models import Event, Turn
from analyst.turns import turns

ENDINGS = [
    (Turn.Status.DONE, "turn_done", {}),
    (Turn.Status.FAILED, "turn_failed", {"reason": "the model failed"}),
    (Turn.Status.CANCELLED, "turn_cancelled", {}),
]


@pytest.mark.parametrize(("status", "event", "payload"), ENDINGS)
def test_the_end_event_sums_the_turns_calls(make_turn, make_call, status, event, payload):
    turn = make_turn()
    make_call(turn, 1200, 300)
    make_call(turn, 1500, 80)
    make_call(make_turn(), 9999, 9999)  # another turn's: not this one's
    turns.end(turn, status, event, payload)
    ended = Event.objects.get(turn=turn, type=event)
    # (2700 × $3 + 380 × $15) / 1M
    usage = {"input_tokens": 2700, "output_tokens": 380, "cost_usd": 0.0138, "calls": 2}
    assert ended.payload == {**payload, "usage": usage}


def test_an_unpriced_model_shows_tokens_and_no_cost(make_turn, make_call):
    turn = make_turn()
    make_call(turn, 12, 7, model="anthropic/claude-test")
    make_call(turn, 10, 5)
    turns.end(turn, Turn.Status.DONE, "turn_done", {})
    usage = Event.objects.get(type="turn_done").payload["usage"]
    assert usage == {"input_tokens": 22, "output_tokens": 12, "cost_usd": None, "calls": 2}


def test_a_call_without_counts_makes_the_cost_unknown(make_turn, make_call):
    turn = make_turn()
    make_call(turn, 100, None)
    make_call(turn, 50, 20)
    turns.end(turn, Turn.Status.DONE, "turn_done", {})
    usage = Event.objects.get(type="turn_done").payload["usage"]
    assert usage == {"input_tokens": 150, "output_tokens": 20, "cost_usd": None, "calls": 2}


def test_a_turn_without_model_calls_used_nothing(make_turn):
    turn = make_turn()
    turns.end(turn, Turn.Status.DONE, "turn_done", {})
    usage = Event.objects.get(type="turn_done").payload["usage"]
    assert usage == {"input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0, "calls": 0}
