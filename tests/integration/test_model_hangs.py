"""A model that hangs: Stop ends the turn at once (not after every attempt's read timeout), and a
model that fails before answering is retried with each retry in the event log."""

import socket
import time
from collections.abc import Iterator

import pytest

from analyst.realtime import events
from tests.fakes.model_server import anthropic_error, anthropic_text
from tests.integration.conftest import wait_for


@pytest.fixture
def hanging_model_url() -> Iterator[str]:
    """Takes connections (the kernel's backlog accepts them) and never answers."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=16)
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    listener.close()


def test_stop_while_the_model_hangs_ends_the_turn_as_cancelled(
    stack, extra_worker, hanging_model_url, api, session
):
    # The default bounds (30 s to the first byte, 4 attempts) would hold this turn for minutes.
    extra_worker(ANTHROPIC_BASE_URL=hanging_model_url)
    response = api.post(f"/api/sessions/{session.id}/messages", {"content": "Hello?"}, "application/json")
    assert response.status_code == 202
    wait_for(session, "turn_started", timeout=60)

    assert api.post(f"/api/sessions/{session.id}/cancel").status_code == 200
    log = wait_for(session, "turn_cancelled", "turn_failed", "turn_done", timeout=10)
    assert log[-1]["type"] == "turn_cancelled"

    # The session takes questions again at once; that one hangs too, and stops as promptly.
    again = api.post(f"/api/sessions/{session.id}/messages", {"content": "Again"}, "application/json")
    assert again.status_code == 202
    api.post(f"/api/sessions/{session.id}/cancel")
    log = wait_for_turn_end(session, again.json()["turn"])
    assert log[-1]["type"] == "turn_cancelled"


def wait_for_turn_end(session, turn: int, timeout: float = 10) -> list[dict]:
    deadline = time.monotonic() + timeout
    while True:
        log = [e for e in events.after(session.id, 0) if e["turn"] == turn]
        if log and log[-1]["type"] in ("turn_cancelled", "turn_failed", "turn_done"):
            return log
        assert time.monotonic() < deadline, f"turn {turn} did not end within {timeout} s: {log}"
        time.sleep(0.1)


def test_each_retry_of_a_failing_model_is_an_event(stack, api, session):
    stack.script(anthropic_error(529, "overloaded_error", "Overloaded"), anthropic_text("Answered."))
    api.post(f"/api/sessions/{session.id}/messages", {"content": "Hi"}, "application/json")
    log = wait_for(session)
    assert log[-1]["type"] == "turn_done"
    (retry,) = [e["payload"] for e in log if e["type"] == "model_retry"]
    assert (retry["retry"], retry["retries"]) == (1, 3)
    assert "Overloaded" in retry["reason"] and retry["delay"] > 0
    types = [e["type"] for e in log]
    assert types.index("model_retry") < types.index("assistant_delta")
