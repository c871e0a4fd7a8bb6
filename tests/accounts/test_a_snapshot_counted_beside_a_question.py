"""A kernel snapshot is counted against its owner's storage under the session's row, then the user's:
the order a question takes (turns.do_start_turn). Counted under the user's row alone, a snapshot
and a question sent to the same session meanwhile deadlocked on Postgres: the question held the
session's row and waited for the user's, the snapshot held the user's and its new row's key needed
the session's. Run on Postgres by `make test-postgres` (SQLite serialises the two whole)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from analyst import dispatch
from analyst.accounts import limits
from analyst.kernels import snapshots
from analyst.models import AnalysisSession, KernelSnapshot, Turn, UserLimits
from analyst.turns import turns
from sandboxes import Sandbox
from tests.celery_sends import record_sends

pytestmark = [pytest.mark.database, pytest.mark.django_db(transaction=True)]


def test_a_snapshot_and_a_question_at_once_both_go_through(sandboxd, monkeypatch):
    monkeypatch.setenv("SANDBOXD_URL", sandboxd.url)
    monkeypatch.setenv("SANDBOXD_TOKEN", sandboxd.token)
    sent = record_sends(monkeypatch, dispatch.RUN_TURN)
    alice = get_user_model().objects.create_user("alice")
    UserLimits.objects.create(user=alice, stored_bytes=1 << 30)  # counted, far from refused
    session = AnalysisSession.objects.create(owner=alice, model="anthropic/claude-test")
    snapshotting = threading.current_thread()
    holding, asked = threading.Event(), threading.Event()
    hold_user = limits.hold_user

    def hold_then_let_the_question_in(user: Any) -> None:
        """The snapshot, once it holds the user's row, lets the question run into its locks and
        gives it time to (where the question waits for the snapshot instead, it waits for
        nothing: the time passes, then the snapshot goes on)."""
        hold_user(user)
        if threading.current_thread() is snapshotting:
            holding.set()
            asked.wait(timeout=3)

    monkeypatch.setattr(limits, "hold_user", hold_then_let_the_question_in)
    failures: list[BaseException] = []

    def ask() -> None:
        try:
            holding.wait(timeout=60)
            turns.do_start_turn(session=session, user=alice, kind=Turn.Kind.CHAT, text="And?")
        except BaseException as exc:  # noqa: BLE001 (reported below, with the snapshot's)
            failures.append(exc)
        finally:
            asked.set()
            connection.close()

    question = threading.Thread(target=ask)
    with Sandbox.create(url=sandboxd.url, token=sandboxd.token) as sandbox:
        sandbox.run_code("x = 41")
        question.start()
        try:
            taken = snapshots.take(session, sandbox, None)
        except BaseException as exc:  # noqa: BLE001
            failures.append(exc)
        finally:
            question.join()
    assert failures == [], failures
    assert list(KernelSnapshot.objects.filter(session=session)) == [taken]
    assert session.turns.count() == 1 and len(sent) == 1
    snapshots.forget(taken)
