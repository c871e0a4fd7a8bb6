"""A user past the daily token budget gets a 429 for a new question; code cells still run."""

from __future__ import annotations

import pytest

from analyst.accounts import usage
from analyst.models import Event, Turn


@pytest.fixture
def spent(settings, session, alice):
    """Alice used 51,200 tokens today; her budget is 50,000."""
    settings.ANALYST_DAILY_TOKEN_BUDGET = 50_000
    earlier = Turn.objects.create(
        session=session, requested_by=alice, kind=Turn.Kind.CHAT, input="?", status=Turn.Status.DONE
    )
    usage.record_call(turn=earlier, model=session.model, input_tokens=50_000, output_tokens=1_200)
    return earlier


def ask(api, session):
    return api.post(f"/api/sessions/{session.id}/messages", {"content": "And now?"}, "application/json")


def test_a_question_past_the_budget_is_429_with_a_clear_message(api, session, spent):
    response = ask(api, session)
    assert response.status_code == 429
    error = response.json()["error"]
    assert error["code"] == "token_budget_exhausted"
    assert error["message"].startswith("You have used 51,200 of your 50,000 tokens for today; ")
    assert error["message"].endswith("Code cells still run.")
    assert list(Turn.objects.all()) == [spent], "no turn was stored"
    assert not Event.objects.exists(), "nothing was logged"


def test_a_code_cell_past_the_budget_still_runs(api, session, spent):
    response = api.post(f"/api/sessions/{session.id}/cells", {"code": "1 + 1"}, "application/json")
    assert response.status_code == 202
    assert Turn.objects.get(id=response.json()["turn"]).kind == Turn.Kind.CELL


def test_under_the_budget_a_question_is_accepted(api, session, spent, settings):
    settings.ANALYST_DAILY_TOKEN_BUDGET = 51_201
    assert ask(api, session).status_code == 202


def test_without_a_budget_nothing_is_refused(api, session, spent, settings):
    settings.ANALYST_DAILY_TOKEN_BUDGET = 0
    assert ask(api, session).status_code == 202
