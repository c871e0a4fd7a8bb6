"""Personas (alice asks, bob is another user), a session of alice's, and a maker of model calls."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from analyst.accounts import usage
from analyst.models import AnalysisSession, ModelCall, Turn


@pytest.fixture
def alice(db: None) -> Any:
    return get_user_model().objects.create_user("alice")


@pytest.fixture
def bob(db: None) -> Any:
    return get_user_model().objects.create_user("bob")


@pytest.fixture
def session(alice: Any) -> AnalysisSession:
    return AnalysisSession.objects.create(owner=alice, model="anthropic/claude-sonnet-4-5")


@pytest.fixture
def make_turn(session: AnalysisSession) -> Callable[..., Turn]:
    def make(*, user: Any = None, status: str = Turn.Status.RUNNING) -> Turn:
        owner = user or session.owner
        return Turn.objects.create(
            session=session, requested_by=owner, kind=Turn.Kind.CHAT, input="?", status=status
        )

    return make


@pytest.fixture
def make_call() -> Callable[..., ModelCall]:
    """Record a model call as the loop does; ``at`` backdates it (the row's clock is the database's)."""

    def make(
        turn: Turn,
        input_tokens: int | None,
        output_tokens: int | None,
        *,
        model: str = "anthropic/claude-sonnet-4-5",
        at: dt.datetime | None = None,
    ) -> ModelCall:
        call = usage.record_call(
            turn=turn, model=model, input_tokens=input_tokens, output_tokens=output_tokens
        )
        if at is not None:
            ModelCall.objects.filter(id=call.id).update(created_at=at)
        return call

    return make
