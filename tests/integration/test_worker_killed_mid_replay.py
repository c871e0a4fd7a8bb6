"""A worker killed mid-replay: the cells it showed stay in the log, the turn ends as failed once
(as any turn whose worker died) and never runs again, and the session goes on."""

from __future__ import annotations

import time

from analyst.models import Turn
from tests.integration.conftest import LEASE_SECONDS, wait_for
from tests.integration.test_resume_and_fork import run_cell
from tests.printed import printed, printed_in_last_turn

SLOW_ON_REPLAY = (
    "import os, time\nprint('working', flush=True)\nif os.path.exists('slow.flag'):\n    time.sleep(120)"
)


def test_a_replay_whose_worker_died_fails_once_and_keeps_what_it_showed(stack, api, session, extra_worker):
    first = extra_worker()
    run_cell(api, session, "print('one')")
    run_cell(api, session, SLOW_ON_REPLAY)
    run_cell(api, session, "open('slow.flag', 'w').close()\nraise RuntimeError('left out')")  # failed
    response = api.post(f"/api/sessions/{session.id}/kernel/run-all")
    assert response.status_code == 202
    replay = response.json()["turn"]
    deadline = time.monotonic() + 60
    while not session.events.filter(turn_id=replay, type="stdout", payload__text="working\n").exists():
        assert time.monotonic() < deadline, "the replay did not reach its second cell"
        time.sleep(0.05)

    first.kill()
    extra_worker()  # a replacement ends what its predecessor left running

    log = wait_for(session, "turn_failed", timeout=LEASE_SECONDS * 10 + 30)
    turn = Turn.objects.get(id=replay)
    assert turn.status == Turn.Status.FAILED and "stopped" in turn.error
    mine = [e for e in log if e["turn"] == replay]
    assert [e["type"] for e in mine].count("turn_started") == 1
    assert [e["payload"]["code"] for e in mine if e["type"] == "cell"] == ["print('one')", SLOW_ON_REPLAY]
    assert printed(mine) == "one\nworking\n"

    after = api.post(f"/api/sessions/{session.id}/cells", {"code": "print('still here')"}, "application/json")
    assert after.status_code == 202
    deadline = time.monotonic() + 90
    while not session.events.filter(turn_id=after.json()["turn"], type="turn_done").exists():
        assert time.monotonic() < deadline, "the next cell did not run"
        time.sleep(0.05)
    assert printed_in_last_turn(wait_for(session)) == "still here\n"
