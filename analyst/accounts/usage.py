"""Token usage: one row per model call, its cost from the price table, totals, the daily budget."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from decimal import Decimal
from fnmatch import fnmatchcase

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, QuerySet, Sum
from django.utils import timezone

from analyst.models import AnalysisSession, ModelCall, Turn

MILLION = Decimal(1_000_000)


class TokenBudgetExhausted(Exception):
    """The user's tokens since UTC midnight reached ANALYST_DAILY_TOKEN_BUDGET: no new chat turn."""


def record_call(*, turn: Turn, model: str, input_tokens: int | None, output_tokens: int | None) -> ModelCall:
    """Store one model answer's token counts (None where the provider did not say)."""
    return ModelCall.objects.create(
        turn=turn,
        session_id=turn.session_id,
        user_id=turn.requested_by_id,
        model=model,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
    )


def price(model: str) -> tuple[Decimal, Decimal] | None:
    """USD per million (input, output) tokens for a model route; None when the table has none.

    An exact route wins over a pattern ("ollama/*"); a route or pattern priced null is unknown.
    """
    table = settings.ANALYST_PRICES
    entry = table[model] if model in table else _pattern_entry(table, model)
    if entry is None:
        return None
    return Decimal(str(entry["input"])), Decimal(str(entry["output"]))


def _pattern_entry(table: dict[str, dict[str, float] | None], model: str) -> dict[str, float] | None:
    patterns = sorted((p for p in table if "*" in p and fnmatchcase(model, p)), key=len, reverse=True)
    return table[patterns[0]] if patterns else None  # the longest pattern is the most specific


def cost_usd(model: str, input_tokens: int | None, output_tokens: int | None) -> Decimal | None:
    """What the tokens cost at the table's price; None when the price or a count is unknown."""
    prices = price(model)
    if prices is None or input_tokens is None or output_tokens is None:
        return None
    return (input_tokens * prices[0] + output_tokens * prices[1]) / MILLION


@dataclass(frozen=True)
class Usage:
    """Tokens as reported (calls that reported none add nothing) and their cost, None if unknown."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: Decimal | None = Decimal(0)
    calls: int = 0

    def __add__(self, other: Usage) -> Usage:
        cost = None if self.cost_usd is None or other.cost_usd is None else self.cost_usd + other.cost_usd
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            cost,
            self.calls + other.calls,
        )

    def as_dict(self) -> dict[str, object]:
        cost = None if self.cost_usd is None else float(round(self.cost_usd, 6))
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": cost,
            "calls": self.calls,
        }


def _by_turn(calls: QuerySet[ModelCall]) -> dict[int, Usage]:
    """Each turn's usage, priced per model row (a session's model may change between turns)."""
    rows = (
        calls.order_by()
        .values("turn_id", "model")
        .annotate(
            calls=Count("id"),
            input=Sum("input_tokens"),
            output=Sum("output_tokens"),
            inputs_known=Count("input_tokens"),
            outputs_known=Count("output_tokens"),
        )
    )
    totals: dict[int, Usage] = {}
    for row in rows:
        all_known = row["inputs_known"] == row["outputs_known"] == row["calls"]
        cost = cost_usd(row["model"], row["input"], row["output"]) if all_known else None
        usage = Usage(row["input"] or 0, row["output"] or 0, cost, row["calls"])
        totals[row["turn_id"]] = totals.get(row["turn_id"], Usage()) + usage
    return totals


def turn_usage(turn: Turn) -> Usage:
    return sum(_by_turn(ModelCall.objects.filter(turn=turn)).values(), Usage())


def session_usage(session: AnalysisSession) -> dict[str, object]:
    """The session's totals and each turn's usage that called a model, oldest turn first."""
    per_turn = _by_turn(ModelCall.objects.filter(session=session))
    total = sum(per_turn.values(), Usage())
    turns = [{"turn": turn_id, **per_turn[turn_id].as_dict()} for turn_id in sorted(per_turn)]
    return {**total.as_dict(), "turns": turns}


def day_start(now: dt.datetime) -> dt.datetime:
    """UTC midnight at or before ``now``: when today's budget began."""
    return now.astimezone(dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def next_reset(now: dt.datetime) -> dt.datetime:
    return day_start(now) + dt.timedelta(days=1)


def tokens_today(user: AbstractBaseUser, *, now: dt.datetime | None = None) -> int:
    """The user's input and output tokens since UTC midnight."""
    start = day_start(now or timezone.now())
    today = ModelCall.objects.filter(user=user, created_at__gte=start)
    sums = today.aggregate(input=Sum("input_tokens"), output=Sum("output_tokens"))
    return (sums["input"] or 0) + (sums["output"] or 0)


def check_budget(user: AbstractBaseUser, *, now: dt.datetime | None = None) -> None:
    """Raise TokenBudgetExhausted once the user's tokens today reach the daily budget (0: none)."""
    budget = settings.ANALYST_DAILY_TOKEN_BUDGET
    if budget <= 0:
        return
    now = now or timezone.now()
    used = tokens_today(user, now=now)
    if used >= budget:
        wait = next_reset(now) - now
        raise TokenBudgetExhausted(
            f"You have used {used:,} of your {budget:,} tokens for today; the budget resets at "
            f"00:00 UTC (in {_duration(wait)}). Code cells still run."
        )


def _duration(wait: dt.timedelta) -> str:
    """'3 h 12 min', '12 min', '4 h': minutes rounded up, so it never says 0 min."""
    hours, minutes = divmod(max(1, math.ceil(wait.total_seconds() / 60)), 60)
    return " ".join(
        part for part in (f"{hours} h" if hours else "", f"{minutes} min" if minutes else "") if part
    )


def budget_dict(user: AbstractBaseUser, *, now: dt.datetime | None = None) -> dict[str, object] | None:
    """The user's day so far against the daily budget, for the API; None when there is no budget."""
    budget = settings.ANALYST_DAILY_TOKEN_BUDGET
    if budget <= 0:
        return None
    now = now or timezone.now()
    return {
        "daily_tokens": budget,
        "used_today": tokens_today(user, now=now),
        "resets_at": next_reset(now).isoformat(),
    }
