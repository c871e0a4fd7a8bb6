"""Each user's share of the machine: turns running at once across their sessions, code cells per
minute, and the bytes their files, charts and saved kernels take. Past one, the API (and so the
page and MCP, which start work the same way) refuses with a message that says which and what to
do, and nothing is stored; an admin's figures for one user replace the defaults."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from analyst.mcp import calls
from analyst.models import AnalysisSession, DataFile, Event, Turn, UserLimits
from analyst.web import limits_shown
from tests.api.conftest import upload


def running_turns(alice, count: int, **fields) -> list[Turn]:
    made = []
    for i in range(count):
        other = AnalysisSession.objects.create(owner=alice, model="anthropic/claude-test", title=f"s{i}")
        made.append(
            Turn.objects.create(
                session=other,
                requested_by=alice,
                kind=Turn.Kind.CHAT,
                input="?",
                status=Turn.Status.RUNNING,
                **fields,
            )
        )
    return made


def cell(api, session, code: str = "1 + 1"):
    return api.post(f"/api/sessions/{session.id}/cells", {"code": code}, "application/json")


def test_past_the_turns_at_once_a_new_turn_is_429_and_nothing_is_stored(api, session, alice, settings):
    settings.ANALYST_LIMIT_CONCURRENT_TURNS = 2
    running_turns(alice, 2)
    response = api.post(f"/api/sessions/{session.id}/messages", {"content": "And?"}, "application/json")
    assert response.status_code == 429
    error = response.json()["error"]
    assert error["code"] == "concurrent_turns"
    assert error["message"].startswith("You have 2 turns running at once across your sessions, your limit;")
    assert not session.turns.exists() and not Event.objects.filter(session=session).exists()
    assert cell(api, session).status_code == 429  # a cell is a turn too


def test_a_turn_only_saving_its_kernel_does_not_count(api, session, alice, settings):
    settings.ANALYST_LIMIT_CONCURRENT_TURNS = 2
    running_turns(alice, 1)
    running_turns(alice, 1, saving=True)
    assert cell(api, session).status_code == 202


def test_an_admins_figure_for_one_user_replaces_the_default(api, session, alice, settings):
    settings.ANALYST_LIMIT_CONCURRENT_TURNS = 1
    running_turns(alice, 1)
    assert cell(api, session).status_code == 429
    UserLimits.objects.create(user=alice, concurrent_turns=2)
    assert cell(api, session).status_code == 202
    session.turns.update(status=Turn.Status.DONE)
    settings.ANALYST_LIMIT_CONCURRENT_TURNS = 0  # no default limit, but hers still holds
    running_turns(alice, 1)
    assert cell(api, session).status_code == 429


def test_cells_per_minute_count_only_the_last_minute(api, session, alice, settings):
    settings.ANALYST_LIMIT_CELLS_PER_MINUTE = 2
    for _ in range(2):
        assert cell(api, session).status_code == 202
        session.turns.update(status=Turn.Status.DONE)
    refused = cell(api, session)
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "cells_per_minute"
    assert (
        "You have run 2 cells in the last minute, your limit; the next can run in"
        in refused.json()["error"]["message"]
    )
    api.post(
        f"/api/sessions/{session.id}/messages", {"content": "Questions are not cells"}, "application/json"
    )
    assert session.turns.filter(kind=Turn.Kind.CHAT).exists()
    session.turns.update(status=Turn.Status.DONE, created_at=timezone.now() - dt.timedelta(seconds=61))
    assert cell(api, session).status_code == 202


def test_an_upload_past_the_storage_limit_is_507_and_the_old_file_stays(
    api, session, alice, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path
    settings.ANALYST_LIMIT_STORED_BYTES = 1000
    assert upload(api, session, "a.csv", b"x\n" + b"1\n" * 299).status_code == 202  # 600 bytes
    assert upload(api, session, "a.csv", b"x\n" + b"2\n" * 299).status_code == 202  # replaces it: 600
    refused = upload(api, session, "b.csv", b"x\n" + b"3\n" * 299)
    assert refused.status_code == 507
    error = refused.json()["error"]
    assert error["code"] == "storage_limit"
    assert error["message"] == (
        "b.csv (600 bytes) would take your files, charts and saved kernels past your 1000 bytes"
        " (they take 600 bytes); delete files or sessions to make room."
    )
    assert list(DataFile.objects.values_list("name", flat=True)) == ["a.csv"]
    with DataFile.objects.get().stored.open("rb") as kept:
        assert kept.read().endswith(b"2\n")


def test_mcp_calls_are_refused_with_the_same_message(session, alice, settings):
    settings.ANALYST_LIMIT_CONCURRENT_TURNS = 1
    running_turns(alice, 1)
    who = calls.Who(user=alice, base_url="http://testserver", client="pytest-agent")
    with pytest.raises(calls.Refused, match="turns running at once across your sessions"):
        calls.start_turn(who, str(session.id), Turn.Kind.CELL, "1 + 1")


def test_usage_beside_each_limit(session, alice, settings, tmp_path):
    settings.ANALYST_LIMIT_STORED_BYTES = 5 << 30
    settings.ANALYST_LIMIT_CELLS_PER_MINUTE = 0
    running_turns(alice, 1)
    assert limits_shown.shown(alice) == [
        {"key": "concurrent_turns", "label": "Turns running at once", "text": "1 of 3"},
        {"key": "cells_per_minute", "label": "Code cells in the last minute", "text": "0 (no limit)"},
        {"key": "stored_bytes", "label": "Files, charts and saved kernels", "text": "0 bytes of 5 GiB"},
    ]
