"""The daily token budget counts a user's tokens since 00:00 UTC, and says when it resets."""

from __future__ import annotations

import datetime as dt

import pytest

from analyst.accounts import usage

UTC = dt.UTC
NOW = dt.datetime(2026, 12, 1, 20, 48, tzinfo=UTC)  # 3 h 12 min before midnight


@pytest.fixture(autouse=True)
def budget(settings):
    settings.ANALYST_DAILY_TOKEN_BUDGET = 50_000


def test_reaching_the_budget_refuses_with_the_usage_and_the_wait(alice, make_turn, make_call):
    turn = make_turn()
    make_call(turn, 40_000, 1_200, at=NOW.replace(hour=1))
    make_call(turn, 9_000, 1_000, at=NOW.replace(hour=0, minute=0))
    with pytest.raises(usage.TokenBudgetExhausted) as refused:
        usage.check_budget(alice, now=NOW)
    assert str(refused.value) == (
        "You have used 51,200 of your 50,000 tokens for today; the budget resets at 00:00 UTC "
        "(in 3 h 12 min). Code cells still run."
    )


def test_the_wait_is_rounded_up_to_the_minute(alice, make_turn, make_call):
    make_call(make_turn(), 50_000, 0, at=NOW.replace(hour=1))
    with pytest.raises(usage.TokenBudgetExhausted, match=r"\(in 3 h 12 min\)"):
        usage.check_budget(alice, now=NOW.replace(second=30))  # 3 h 11 min 30 s to go
    with pytest.raises(usage.TokenBudgetExhausted, match=r"\(in 4 h\)"):
        usage.check_budget(alice, now=NOW.replace(hour=20, minute=0))


def test_exactly_the_budget_is_reached_one_token_less_is_not(alice, make_turn, make_call):
    turn = make_turn()
    call = make_call(turn, 49_999, 0, at=NOW)
    usage.check_budget(alice, now=NOW)
    call.output_tokens = 1
    call.save()
    with pytest.raises(usage.TokenBudgetExhausted):
        usage.check_budget(alice, now=NOW)


def test_yesterdays_tokens_do_not_count(alice, make_turn, make_call):
    make_call(make_turn(), 60_000, 0, at=dt.datetime(2026, 11, 30, 23, 59, 59, tzinfo=UTC))
    usage.check_budget(alice, now=dt.datetime(2026, 12, 1, 0, 0, tzinfo=UTC))
    with pytest.raises(usage.TokenBudgetExhausted, match=r"\(in 1 min\)"):
        usage.check_budget(alice, now=dt.datetime(2026, 11, 30, 23, 59, 30, tzinfo=UTC))


def test_the_day_is_utcs_whatever_the_clock_passed_in_says(alice, make_turn, make_call):
    # 01:30 in UTC+2 is 23:30 UTC of the day before: the tokens at 22:00 UTC count.
    make_call(make_turn(), 50_000, 0, at=dt.datetime(2026, 11, 30, 22, 0, tzinfo=UTC))
    local = dt.datetime(2026, 12, 1, 1, 30, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    with pytest.raises(usage.TokenBudgetExhausted, match=r"\(in 30 min\)"):
        usage.check_budget(alice, now=local)


def test_only_the_users_own_tokens_count(alice, bob, make_turn, make_call):
    make_call(make_turn(user=bob), 50_000, 0, at=NOW)
    usage.check_budget(alice, now=NOW)
    with pytest.raises(usage.TokenBudgetExhausted):
        usage.check_budget(bob, now=NOW)


def test_unreported_counts_add_nothing(alice, make_turn, make_call):
    make_call(make_turn(), None, None, at=NOW)
    make_call(make_turn(), 49_000, None, at=NOW)
    usage.check_budget(alice, now=NOW)


def test_a_budget_of_zero_is_no_budget(alice, make_turn, make_call, settings):
    settings.ANALYST_DAILY_TOKEN_BUDGET = 0
    make_call(make_turn(), 10**9, 10**9, at=NOW)
    usage.check_budget(alice, now=NOW)
