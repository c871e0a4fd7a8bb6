"""Restart and run all (POST /api/sessions/<id>/kernel/run-all): one turn that restarts the kernel
(files kept) and runs again, in order, the cells that made its state, each shown as a cell of
the replay; cells that failed when they ran are left out, and it stops at the first error."""

from __future__ import annotations

import time

from analyst.models import Turn
from tests.integration.conftest import wait_for
from tests.integration.test_resume_and_fork import run_cell
from tests.printed import printed_in_last_turn


def run_all(api, session) -> list[dict]:
    ended_before = session.events.filter(type__in=["turn_done", "turn_failed"]).count()
    response = api.post(f"/api/sessions/{session.id}/kernel/run-all")
    assert response.status_code == 202, response.content
    deadline = time.monotonic() + 120
    while session.events.filter(type__in=["turn_done", "turn_failed"]).count() <= ended_before:
        assert time.monotonic() < deadline, "the replay's turn did not end"
        time.sleep(0.05)
    log = wait_for(session)
    start = max(i for i, e in enumerate(log) if e["payload"].get("code") == "replay_queued")
    return log[start:]


def test_run_all_rebuilds_the_state_from_an_empty_kernel(stack, api, session):
    run_cell(api, session, "x = 20")
    run_cell(api, session, "leftover = 1\nraise ValueError('this one failed')")  # left out
    run_cell(api, session, "y = x * 2\nprint('y is', y)")
    run_cell(api, session, "x = 21")  # what x is now: the later cell, replayed after

    replay = run_all(api, session)
    assert replay[-1]["type"] == "turn_done"
    assert [e["payload"]["kind"] for e in replay if e["type"] == "turn_started"] == ["replay"]
    assert any(e["payload"].get("code") == "kernel_restarted" for e in replay)
    cells = [e["payload"] for e in replay if e["type"] == "cell"]
    assert [c["code"] for c in cells] == ["x = 20", "y = x * 2\nprint('y is', y)", "x = 21"]
    assert [c["replay"] for c in cells] == [{"index": i, "of": 3, "by": "user"} for i in (1, 2, 3)]
    assert "".join(e["payload"]["text"] for e in replay if e["type"] == "stdout") == "y is 40\n"
    assert [e["payload"]["text"] for e in replay if e["payload"].get("code") == "replay_done"] == [
        "All 3 cells ran."
    ]
    assert stack.requests == []  # the model is not called

    log = run_cell(api, session, "print(x, y, 'leftover' in dir())")
    assert printed_in_last_turn(log) == "21 40 False\n"

    # A second run-all replays what the first left: the same three cells, none twice.
    again = run_all(api, session)
    assert [e["payload"]["code"] for e in again if e["type"] == "cell"] == [c["code"] for c in cells] + [
        "print(x, y, 'leftover' in dir())"
    ]


def test_run_all_stops_at_the_first_error(stack, api, session):
    run_cell(api, session, "a = 1")
    run_cell(api, session, "open('once.txt', 'x').close()")  # files stay: run again, it fails
    run_cell(api, session, "b = 2")

    replay = run_all(api, session)
    assert replay[-1]["type"] == "turn_done"
    assert [e["payload"]["code"] for e in replay if e["type"] == "cell"] == [
        "a = 1",
        "open('once.txt', 'x').close()",
    ]
    assert [e["payload"]["name"] for e in replay if e["type"] == "error"] == ["FileExistsError"]
    stopped = [e["payload"] for e in replay if e["payload"].get("code") == "replay_stopped"]
    assert len(stopped) == 1 and stopped[0]["index"] == 2 and stopped[0]["of"] == 3
    assert stopped[0]["text"].startswith("Stopped at cell 2 of 3, which failed (FileExistsError")
    assert stopped[0]["text"].endswith("the 1 after it did not run.")
    assert not Turn.objects.filter(session=session, kind=Turn.Kind.CHAT).exists()  # no repair asked

    log = run_cell(api, session, "print('a' in dir(), 'b' in dir())")
    assert printed_in_last_turn(log) == "True False\n"


def test_stop_ends_a_replay_between_its_cells(stack, api, session):
    run_cell(api, session, "import time\ntime.sleep(0.1)")
    # Long only when replayed (the workdir keeps the marker across the restart).
    second = (
        "import os\nprint('second', flush=True)\n"
        "time.sleep(30 if os.path.exists('ran') else 0)\nopen('ran', 'w').close()"
    )
    run_cell(api, session, second)
    run_cell(api, session, "print('third')")
    response = api.post(f"/api/sessions/{session.id}/kernel/run-all")
    assert response.status_code == 202
    turn = response.json()["turn"]
    deadline = time.monotonic() + 60
    while not session.events.filter(type="stdout", turn_id=turn, payload__text="second\n").exists():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    api.post(f"/api/sessions/{session.id}/cancel")
    log = wait_for(session, "turn_cancelled")
    assert Turn.objects.get(id=turn).status == Turn.Status.CANCELLED
    replayed = [e["payload"]["code"] for e in log if e["type"] == "cell" and e["turn"] == turn]
    assert replayed == ["import time\ntime.sleep(0.1)", second]
