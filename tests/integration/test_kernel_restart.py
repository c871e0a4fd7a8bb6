"""Restart the kernel (POST /api/sessions/<id>/kernel/restart): a turn of its own that leaves a
fresh kernel in the same sandbox (files kept), saves it as the session's state (so a resume does
not bring the old variables back), tells the page and the model, and waits its turn."""

from __future__ import annotations

import time

from analyst.models import KernelSnapshot, Message, UserLimits
from analyst.sessions.exports import transcript
from sandboxes import Sandbox
from tests.integration.conftest import wait_for
from tests.integration.test_resume_and_fork import run_cell
from tests.printed import printed_in_last_turn


def restart(api, session) -> list[dict]:
    ended_before = session.events.filter(type="turn_done").count()
    response = api.post(f"/api/sessions/{session.id}/kernel/restart")
    assert response.status_code == 202, response.content
    deadline = time.monotonic() + 90
    while session.events.filter(type__in=["turn_done", "turn_failed"]).count() <= ended_before:
        assert time.monotonic() < deadline, "the restart's turn did not end"
        time.sleep(0.05)
    return wait_for(session)


def test_a_restart_empties_the_kernel_keeps_files_and_is_what_a_resume_brings_back(
    stack, api, session, sandboxd
):
    run_cell(api, session, "x = 41\nopen('kept.txt', 'w').write('still here')")
    before = KernelSnapshot.objects.filter(session=session).count()

    log = restart(api, session)
    last_turn = log[
        max(
            i for i, e in enumerate(log) if e["type"] == "notice" and e["payload"].get("code") == "restarting"
        ) :
    ]
    assert [e["type"] for e in last_turn][:2] == ["notice", "turn_started"]
    assert last_turn[1]["payload"] == {"kind": "restart"}
    restarted = [e for e in last_turn if e["payload"].get("code") == "kernel_restarted"]
    assert len(restarted) == 1 and "variables and imports are gone" in restarted[0]["payload"]["text"]
    assert last_turn[-1]["type"] == "turn_done"
    assert KernelSnapshot.objects.filter(session=session).count() == before + 1  # the fresh state, saved

    log = run_cell(api, session, "print('x' in dir(), open('kept.txt').read())")
    assert printed_in_last_turn(log) == "False still here\n"

    # The sandbox gone, the session resumes from the snapshot taken after the restart.
    session.refresh_from_db()
    gone = Sandbox.connect(session.sandbox_id, url=sandboxd.url, token=sandboxd.token)
    gone.kill()
    gone.close()
    log = run_cell(api, session, "print('x' in dir())")
    assert printed_in_last_turn(log) == "False\n"

    told = [m.parts for m in Message.objects.filter(session=session, role="user")]
    assert any("I restarted the kernel" in part.get("text", "") for parts in told for part in parts)
    notes = [block.text for block in transcript.read(session) if getattr(block, "role", "") == "note"]
    assert notes == [restarted[0]["payload"]["text"]]  # an export says where the kernel started anew


def test_a_restart_during_a_turn_stops_it_first_even_a_cell_that_ignores_interrupts(
    stack, api, session, alice
):
    # One turn at a time: the turn being stopped does not count against the restart (the code
    # before refused it, 429 concurrent_turns).
    UserLimits.objects.create(user=alice, concurrent_turns=1)
    run_cell(api, session, "x = 41")
    stubborn = (
        "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "print('spinning', flush=True)\nwhile True: pass"
    )
    api.post(f"/api/sessions/{session.id}/cells", {"code": stubborn}, "application/json")
    wait_for(session, "stdout")

    # The old code refused it (409 turn_running) until the cell's 120 s timeout.
    response = api.post(f"/api/sessions/{session.id}/kernel/restart")

    assert response.status_code == 202, response.content
    restart_turn = response.json()["turn"]
    deadline = time.monotonic() + 60
    while not session.events.filter(turn_id=restart_turn, type="turn_done").exists():
        assert time.monotonic() < deadline, "the restart's turn did not end"
        time.sleep(0.05)
    log = wait_for(session)
    stopped = [e for e in log if e["type"] == "turn_cancelled"]
    assert len(stopped) == 1 and stopped[0]["turn"] != restart_turn
    errors = [e["payload"] for e in log if e["type"] == "error"]
    assert any(e.get("name") == "KernelRestarted" for e in errors), errors
    assert any(e["payload"].get("code") == "kernel_restarted" for e in log if e["turn"] == restart_turn)
    # The stopped cell's kernel is not brought back from the snapshot only to be emptied.
    assert not [e for e in log if e["type"] == "kernel_restored"]

    log = run_cell(api, session, "print('x' in dir())")
    assert printed_in_last_turn(log) == "False\n"
