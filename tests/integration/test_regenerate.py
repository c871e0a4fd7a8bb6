"""Regenerate the last answer: the same question goes to the model again, in the kernel as it was
before it (restored from the snapshot taken after the turn before); the earlier answer stays in the
log, superseded, and the model's history for later turns holds only the new one."""

from __future__ import annotations

import json
import time

from analyst.models import KernelSnapshot, Message, Turn
from analyst.realtime import events
from tests.fakes.model_server import anthropic_text, anthropic_tool_call
from tests.printed import printed, printed_in_last_turn


def finished(session, count: int) -> list[dict]:
    """The log, once ``count`` turns of the session have ended (and said so: the status comes
    first, then the event)."""
    deadline = time.monotonic() + 120
    ends = ["turn_done", "turn_failed", "turn_cancelled"]
    while (
        session.turns.filter(status__in=Turn.FINISHED).count() < count
        or session.events.filter(type__in=ends).count() < count
    ):
        assert time.monotonic() < deadline, [e["type"] for e in events.after(session.id, 0)]
        time.sleep(0.1)
    return events.after(session.id, 0)


def ask(api, session, text: str) -> int:
    response = api.post(f"/api/sessions/{session.id}/messages", {"content": text}, "application/json")
    assert response.status_code == 202, response.content
    return response.json()["turn"]


def texts(request) -> str:
    return json.dumps(request.json["messages"])


def test_a_regenerated_answer_replaces_the_old_for_the_model(stack, api, session):
    stack.script(
        anthropic_tool_call("run_python", {"code": "x = 1"}, tool_id="toolu_01"),
        anthropic_text("x is one."),
        anthropic_tool_call("run_python", {"code": "y = x + 1\nold = True"}, tool_id="toolu_02"),
        anthropic_text("The old answer: y is two."),
    )
    ask(api, session, "Set x")
    finished(session, 1)
    second = ask(api, session, "Make y")
    finished(session, 2)
    assert KernelSnapshot.objects.filter(session=session).count() == 2

    stack.script(
        anthropic_tool_call(
            "run_python", {"code": "print('old' in dir(), x)\ny = x + 10"}, tool_id="toolu_03"
        ),
        anthropic_text("The new answer: y is eleven."),
    )
    response = api.post(f"/api/sessions/{session.id}/turns/{second}/regenerate")
    assert response.status_code == 202, response.content
    again = response.json()["turn"]
    log = finished(session, 3)

    # The kernel was put back as it was after the first turn: the old answer's variables are gone.
    regenerated = [e for e in log if e["turn"] == again]
    assert printed(regenerated) == "False 1\n"
    rewound = [e for e in regenerated if e["type"] == "kernel_restored"]
    assert len(rewound) == 1 and rewound[0]["payload"]["code"] == "kernel_rewound"
    assert regenerated[0]["type"] == "user_message"
    assert regenerated[0]["payload"] == {"text": "Make y", "by": "alice", "regenerates": second}
    # The old answer stays in the log; only its messages left the model's history.
    assert any(e["type"] == "assistant_message" and "old answer" in e["payload"]["text"] for e in log)
    assert not Message.objects.filter(turn_id=second).exists()
    asked_again = texts(stack.requests[4])
    assert asked_again.count("Make y") == 1 and "old answer" not in asked_again and "x is one." in asked_again
    # The old answer's snapshot is gone; the new one's is the session's latest.
    assert not KernelSnapshot.objects.filter(turn_id=second).exists()
    assert KernelSnapshot.objects.filter(session=session).order_by("-id").first().turn_id == again

    stack.script(
        anthropic_tool_call("run_python", {"code": "print(y)"}, tool_id="toolu_04"),
        anthropic_text("Still eleven."),
    )
    ask(api, session, "And y now?")
    log = finished(session, 4)
    later = texts(stack.requests[6])
    assert "new answer" in later and "old answer" not in later and later.count("Make y") == 1
    assert printed_in_last_turn(log) == "11\n"


def test_an_answer_that_ran_no_code_leaves_the_kernel(stack, api, session):
    stack.script(
        anthropic_tool_call("run_python", {"code": "x = 1"}, tool_id="toolu_01"),
        anthropic_text("Set."),
        anthropic_text("It is one, I think."),
        anthropic_text("It is one."),
    )
    ask(api, session, "Set x")
    finished(session, 1)
    second = ask(api, session, "What is x?")
    finished(session, 2)
    response = api.post(f"/api/sessions/{session.id}/turns/{second}/regenerate")
    assert response.status_code == 202, response.content
    log = finished(session, 3)
    assert not [e for e in log if e["type"] in ("kernel_restored", "notice")]
    session.refresh_from_db()
    assert "I think" not in texts(stack.requests[3])


def test_without_the_earlier_snapshot_it_runs_in_the_current_kernel(stack, api, session):
    stack.script(
        anthropic_tool_call("run_python", {"code": "x = 1"}, tool_id="toolu_01"),
        anthropic_text("Set."),
        anthropic_tool_call("run_python", {"code": "x = 2"}, tool_id="toolu_02"),
        anthropic_text("Changed."),
        anthropic_tool_call("run_python", {"code": "print(x)"}, tool_id="toolu_03"),
        anthropic_text("It is two."),
    )
    ask(api, session, "Set x")
    finished(session, 1)
    second = ask(api, session, "Change x")
    finished(session, 2)
    KernelSnapshot.objects.filter(turn__input="Set x").delete()  # as pruning past the bound does
    api.post(f"/api/sessions/{session.id}/turns/{second}/regenerate")
    log = finished(session, 3)
    notice = [e["payload"] for e in log if e["type"] == "notice"]
    assert len(notice) == 1 and notice[0]["code"] == "state_lost" and "current kernel" in notice[0]["text"]
    assert printed(log) == "2\n"
