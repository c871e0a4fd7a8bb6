"""A session's kernel may be paused (idle, short of memory, or past its owner's limit of running
kernels): its next turn resumes it with its variables and says so in one quiet line, and a user
past their limit has their least recently used other kernel paused, not a refusal, which only the
paused session tells (when it resumes), never the session that took its place."""

from __future__ import annotations

from analyst.models import AnalysisSession, UserLimits
from analyst.web import limits_shown
from sandboxes import Sandbox
from tests.integration.test_resume_and_fork import run_cell
from tests.printed import printed_in_last_turn


def test_a_paused_kernel_resumes_quietly_with_its_variables(stack, api, session, sandboxd):
    run_cell(api, session, "import pandas as pd\nframe = pd.DataFrame({'v': [1, 2, 3]})\nx = 41")
    session.refresh_from_db()
    assert Sandbox.pause_by_id(session.sandbox_id, url=sandboxd.url, token=sandboxd.token).state == "paused"

    log = run_cell(api, session, "print(x + 1, int(frame.v.sum()))")

    assert printed_in_last_turn(log) == "42 6\n"
    resumed = [e for e in log if e["type"] == "kernel_resumed"]
    assert len(resumed) == 1
    assert resumed[0]["payload"]["why"] == "asked" and resumed[0]["payload"]["unsaved"] == []
    assert "resumed with its variables" in resumed[0]["payload"]["text"]
    assert not [e for e in log if e["type"] in ("kernel_restored", "notice")]  # no alarm
    session.refresh_from_db()
    assert (
        session.sandbox_id
        == Sandbox.list({"session": str(session.id)}, url=sandboxd.url, token=sandboxd.token)[0].sandbox_id
    )

    log = run_cell(api, session, "print(x)")
    assert len([e for e in log if e["type"] == "kernel_resumed"]) == 1  # said once per pause


def test_a_user_past_their_running_kernel_limit_has_the_oldest_paused(stack, api, session, alice, sandboxd):
    UserLimits.objects.create(user=alice, live_sandboxes=1)
    service = {"url": sandboxd.url, "token": sandboxd.token}
    first = AnalysisSession.objects.create(
        owner=alice, model="anthropic/claude-test", title="Quarterly sales"
    )
    run_cell(api, first, "mine = 'first'")
    first.refresh_from_db()

    log = run_cell(api, session, "mine = 'second'")

    # Another session's pause is not this session's news: it says nothing of it.
    assert [e for e in log if e["type"] in ("notice", "kernel_resumed")] == []
    assert Sandbox.list({"session": str(first.id)}, **service)[0].state == "paused"
    shown = {line["key"]: line["text"] for line in limits_shown.shown(alice)}
    assert shown["live_sandboxes"] == "1 of 1"  # on the sessions page, under "Your limits"

    log = run_cell(api, first, "print(mine)")  # its turn brings it back, and pauses the other
    assert printed_in_last_turn(log) == "first\n"
    assert [e["type"] for e in log if e["type"] in ("notice", "kernel_resumed")] == ["kernel_resumed"]
    session.refresh_from_db()
    assert Sandbox.list({"session": str(session.id)}, **service)[0].state == "paused"


def test_deleting_a_session_removes_its_paused_kernel_without_resuming_it(stack, api, session, sandboxd):
    run_cell(api, session, "x = 1")
    session.refresh_from_db()
    service = {"url": sandboxd.url, "token": sandboxd.token}
    Sandbox.pause_by_id(session.sandbox_id, **service)

    assert api.delete(f"/api/sessions/{session.id}").status_code == 200

    assert Sandbox.list({"session": str(session.id)}, **service) == []
    assert f"resumed sandbox {session.sandbox_id}" not in sandboxd.read_log()
