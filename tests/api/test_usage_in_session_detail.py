"""The session detail carries its token usage: totals, each turn's, and the owner's daily budget."""

from __future__ import annotations

import pytest

from analyst.accounts import usage
from analyst.models import Turn


def turn_with_calls(session, user, *calls, model="anthropic/claude-sonnet-4-5"):
    turn = Turn.objects.create(
        session=session, requested_by=user, kind=Turn.Kind.CHAT, input="?", status=Turn.Status.DONE
    )
    for input_tokens, output_tokens in calls:
        usage.record_call(turn=turn, model=model, input_tokens=input_tokens, output_tokens=output_tokens)
    return turn


def detail(api, session):
    response = api.get(f"/api/sessions/{session.id}")
    assert response.status_code == 200
    return response.json()


def test_totals_and_each_turn_that_called_a_model(api, session, alice):
    first = turn_with_calls(session, alice, (1000, 200), (1500, 100))
    Turn.objects.create(session=session, requested_by=alice, kind=Turn.Kind.CELL, input="1", status="done")
    second = turn_with_calls(session, alice, (4000, 500), model="openai/gpt-4.1")
    assert detail(api, session)["usage"] == {
        "input_tokens": 6500,
        "output_tokens": 800,
        "cost_usd": 0.024,  # (2500 × 3 + 300 × 15 + 4000 × 2 + 500 × 8) / 1M
        "calls": 3,
        "turns": [
            {"turn": first.id, "input_tokens": 2500, "output_tokens": 300, "cost_usd": 0.012, "calls": 2},
            {"turn": second.id, "input_tokens": 4000, "output_tokens": 500, "cost_usd": 0.012, "calls": 1},
        ],
    }


def test_one_unpriced_turn_makes_the_total_cost_unknown_not_smaller(api, session, alice):
    priced = turn_with_calls(session, alice, (1000, 0))
    unpriced = turn_with_calls(session, alice, (1000, 0), model="anthropic/claude-test")
    shown = detail(api, session)["usage"]
    assert (shown["input_tokens"], shown["cost_usd"]) == (2000, None)
    assert [(t["turn"], t["cost_usd"]) for t in shown["turns"]] == [(priced.id, 0.003), (unpriced.id, None)]


def test_a_new_session_used_nothing(api, session):
    assert detail(api, session)["usage"] == {
        "input_tokens": 0,
        "output_tokens": 0,
        "cost_usd": 0.0,
        "calls": 0,
        "turns": [],
    }


def test_other_sessions_do_not_count(api, session, alice):
    other = type(session).objects.create(owner=alice, model=session.model)
    turn_with_calls(other, alice, (1000, 1000))
    assert detail(api, session)["usage"]["calls"] == 0


@pytest.mark.parametrize("budget", [0, 50_000])
def test_the_budget_shows_the_day_so_far(api, session, alice, settings, budget):
    settings.ANALYST_DAILY_TOKEN_BUDGET = budget
    turn_with_calls(session, alice, (1000, 234))
    shown = detail(api, session)["budget"]
    if budget == 0:
        assert shown is None
    else:
        assert shown["daily_tokens"] == 50_000 and shown["used_today"] == 1234
        assert shown["resets_at"].endswith("T00:00:00+00:00")
