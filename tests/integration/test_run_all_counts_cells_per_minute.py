"""Restart and run all counts each cell it runs against the user's cells-per-minute limit, as
their own cells do (it ran 9 cells in a minute under a limit of 3): at the limit it pauses before
its next cell and says so, their cells elsewhere are refused meanwhile, and it goes on by itself
once the minute has room, losing nothing."""

from __future__ import annotations

import datetime as dt
import time

from django.utils import timezone

from analyst.models import AnalysisSession, Event, Turn, UserLimits
from analyst.realtime import events
from tests.integration.test_resume_and_fork import run_cell

CELLS = ["a = 1", "b = a + 1", "c = b + 1", "print('d is', c + 1)"]


def notices(session: AnalysisSession, code: str) -> list[dict]:
    return [e["payload"] for e in events.after(session.id, 0) if e["payload"].get("code") == code]


def wait_until(done, what: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def test_a_replay_pauses_at_the_limit_and_goes_on_when_the_minute_has_room(stack, api, session, alice):
    for code in CELLS:
        run_cell(api, session, code)
    # Those four are a minute old; her limit is 3 from now on.
    Turn.objects.filter(session=session).update(created_at=timezone.now() - dt.timedelta(seconds=61))
    UserLimits.objects.create(user=alice, cells_per_minute=3)

    response = api.post(f"/api/sessions/{session.id}/kernel/run-all")
    assert response.status_code == 202, response.content
    replay = Turn.objects.get(id=response.json()["turn"])
    ended = ("turn_done", "turn_failed", "turn_cancelled")
    wait_until(
        lambda: notices(session, "replay_paused") or replay.events.filter(type__in=ended).exists(),
        "the replay neither paused nor ended",
    )
    paused = notices(session, "replay_paused")
    assert len(paused) == 1, "the replay ran its 4 cells under a limit of 3 without a pause"
    assert paused[0]["index"] == 4 and paused[0]["of"] == 4
    assert paused[0]["text"].startswith(
        "Paused before cell 4 of 4: you have run 3 cells in the last minute, your limit. The replay"
        " goes on by itself in about "
    )
    assert [e.payload["code"] for e in replay.events.filter(type="cell").order_by("seq")] == CELLS[:3]
    assert not replay.events.filter(type__in=ended).exists()

    # Meanwhile her cells in another session are refused: the replay's count as hers.
    other = AnalysisSession.objects.create(owner=alice, model="anthropic/claude-test")
    refused = api.post(f"/api/sessions/{other.id}/cells", {"code": "1"}, "application/json")
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "cells_per_minute"

    # A minute later (the replay's three cells moved back in time), it goes on by itself.
    replay.events.filter(type="cell").update(created_at=timezone.now() - dt.timedelta(seconds=61))
    wait_until(lambda: replay.events.filter(type__in=ended).exists(), "the paused replay never ended")
    assert replay.events.filter(type="turn_done").exists()
    assert [n["index"] for n in notices(session, "replay_resumed")] == [4]
    assert [e.payload["code"] for e in replay.events.filter(type="cell").order_by("seq")] == CELLS
    assert [n["text"] for n in notices(session, "replay_done")] == ["All 4 cells ran."]
    printed = "".join(e.payload["text"] for e in replay.events.filter(type="stdout"))
    assert printed == "d is 4\n"


def test_stop_ends_a_paused_replay_and_keeps_what_ran(stack, api, session, alice):
    for code in CELLS[:2]:
        run_cell(api, session, code)
    Turn.objects.filter(session=session).update(created_at=timezone.now() - dt.timedelta(seconds=61))
    UserLimits.objects.create(user=alice, cells_per_minute=1)

    response = api.post(f"/api/sessions/{session.id}/kernel/run-all")
    assert response.status_code == 202, response.content
    replay = Turn.objects.get(id=response.json()["turn"])
    wait_until(lambda: notices(session, "replay_paused"), "the replay did not pause at its second cell")
    assert api.post(f"/api/sessions/{session.id}/cancel").status_code == 200
    wait_until(lambda: replay.events.filter(type="turn_cancelled").exists(), "Stop did not end the replay")
    assert [e.payload["code"] for e in replay.events.filter(type="cell")] == CELLS[:1]
    assert Event.objects.filter(session=session, type="cell_done", turn=replay).count() == 1


def test_at_the_limit_a_replay_is_refused_before_it_restarts_the_kernel(stack, api, session, alice):
    run_cell(api, session, CELLS[0])
    UserLimits.objects.create(user=alice, cells_per_minute=1)  # that cell filled her minute

    refused = api.post(f"/api/sessions/{session.id}/kernel/run-all")
    assert refused.status_code == 429, refused.content
    assert refused.json()["error"]["code"] == "cells_per_minute"
    assert not Turn.objects.filter(session=session, kind=Turn.Kind.REPLAY).exists()
