"""A question sent while the last turn snapshots the kernel is stored, answered 202, and starts
once that save ends: run exactly once, after it; and it can be stopped while it waits."""

from __future__ import annotations

import time
from typing import Any

from analyst.models import AnalysisSession, Turn
from tests.fakes.model_server import anthropic_text
from tests.integration.conftest import wait_for

# A few hundred megabytes of floats: the snapshot after this cell takes a while to write.
BIG_CELL = "big = np.random.default_rng(0).random(40_000_000)\nprint(big.size)"


def send_while_saving(api: Any, session: AnalysisSession, content: str) -> Any:
    """Run BIG_CELL, wait until its turn is saving the kernel, then ask ``content``."""
    api.post(f"/api/sessions/{session.id}/cells", {"code": BIG_CELL}, "application/json")
    deadline = time.monotonic() + 90
    while not Turn.objects.filter(session=session, saving=True).exists():
        assert time.monotonic() < deadline, "the cell's turn never started saving"
        time.sleep(0.02)
    return api.post(f"/api/sessions/{session.id}/messages", {"content": content}, "application/json")


def ended(session: AnalysisSession, count: int) -> list[dict[str, Any]]:
    ends = {"turn_done", "turn_failed", "turn_cancelled"}
    log = wait_for(session)
    while sum(e["type"] in ends for e in log) < count:
        log = wait_for(session)
    return log


def test_a_question_sent_while_saving_runs_after_the_save(stack, api, session):
    stack.script(anthropic_text("It holds 40 million numbers."))
    response = send_while_saving(api, session, "How big is big?")

    assert response.status_code == 202, response.content
    saving, queued = Turn.objects.filter(session=session).order_by("id")
    assert response.json() == {"turn": queued.id, "status": "queued"}
    log = ended(session, 2)
    steps = [
        (e["turn"], e["type"]) for e in log if e["type"] in ("user_message", "turn_started", "turn_done")
    ]
    assert steps == [
        (saving.id, "turn_started"),
        (queued.id, "user_message"),  # stored while the first turn still saved
        (saving.id, "turn_done"),
        (queued.id, "turn_started"),
        (queued.id, "turn_done"),
    ]
    assert log[-1]["type"] == "turn_done" and log[-1]["turn"] == queued.id
    assert len(stack.requests) == 1, "asked the model exactly once"
    assert "big.size" in str(stack.requests[0].json["messages"])  # it saw the cell before it
    assert [e["payload"]["text"] for e in log if e["type"] == "assistant_message"] == [
        "It holds 40 million numbers."
    ]


def test_a_question_waiting_behind_a_save_can_be_stopped(stack, api, session):
    response = send_while_saving(api, session, "Never mind")
    assert response.status_code == 202, response.content

    assert api.post(f"/api/sessions/{session.id}/cancel").json()["turn"] == response.json()["turn"]
    log = ended(session, 2)
    saving, queued = Turn.objects.filter(session=session).order_by("id")
    assert (saving.status, queued.status) == (Turn.Status.DONE, Turn.Status.CANCELLED)
    assert [e["type"] for e in log if e["turn"] == queued.id] == ["user_message", "turn_cancelled"]
    assert stack.requests == []
    assert session.snapshots.filter(turn=saving).exists(), "the save itself went on"
