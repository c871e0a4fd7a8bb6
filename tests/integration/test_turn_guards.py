"""A turn runs at most once, only for a member of its session's workspace whose role allows it, and
within its round limit."""

from django.contrib.auth import get_user_model

from analyst import tasks
from analyst.models import Turn
from analyst.realtime import events
from tests.fakes.model_server import anthropic_text, anthropic_tool_call
from tests.integration.conftest import wait_for


def test_a_turn_delivered_twice_runs_once(stack, api, session):
    stack.script(anthropic_text("Once."))
    api.post(f"/api/sessions/{session.id}/messages", {"content": "Hi"}, "application/json")
    turn = Turn.objects.get(session=session)
    tasks.run_turn.delay(turn.id)  # as if the broker delivered it again
    log = wait_for(session)
    assert [e["type"] for e in log].count("turn_started") == 1
    assert len(stack.requests) == 1


def test_a_turn_for_someone_elses_session_does_not_run(transactional_db, session):
    from analyst.turns.turns import execute

    mallory = get_user_model().objects.create_user("mallory")
    turn = Turn.objects.create(session=session, requested_by=mallory, kind=Turn.Kind.CELL, input="1")
    execute(turn.id)
    turn.refresh_from_db()
    assert turn.status == Turn.Status.FAILED
    assert events.after(session.id, 0) == []


def test_the_round_limit_stops_a_model_that_never_answers(stack, api, session, settings):
    rounds = settings.ANALYST_MAX_TOOL_ROUNDS  # the worker runs with the same default
    stack.script(
        *[anthropic_tool_call("run_python", {"code": f"{i}"}, tool_id=f"t{i}") for i in range(rounds)]
    )
    api.post(f"/api/sessions/{session.id}/messages", {"content": "Loop"}, "application/json")
    log = wait_for(session)
    assert log[-1]["type"] == "turn_done"
    limit = [e for e in log if e["type"] == "error" and e["payload"].get("code") == "too_many_rounds"]
    assert len(limit) == 1 and "ask again" in limit[0]["payload"]["message"]
    assert [e["type"] for e in log].count("tool_call") == rounds
    assert stack.pending == 0
