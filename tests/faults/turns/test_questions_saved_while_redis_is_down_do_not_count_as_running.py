"""A question saved while Redis is down (stored, not sent to the queue) is waiting, not running: it
does not take a place under the turns-at-once limit, so the user's next question in another
session is not refused 429 for it; how many may wait is bounded (ANALYST_LIMIT_WAITING_TURNS).
Once Redis is back the waiting ones run, and the user goes on as usual. Web and worker use a
Redis of the test's own."""

import time

from analyst.accounts import limits
from tests.fakes.model_server import anthropic_text
from tests.faults.turns.workers import ask, assert_log_invariants, new_session, wait_for_event


def saved_for_later(client, session, text: str) -> int:
    response = client.post(f"/api/sessions/{session.id}/messages", {"content": text}, "application/json")
    assert response.status_code == 503, response.content
    assert response.json()["error"]["code"] == "queue_unavailable"
    return response.json()["turn"]


def until_waiting(user, count: int) -> None:
    """Until ``count`` of the user's questions are past the moment the web process sends one."""
    deadline = time.monotonic() + 30
    while limits.waiting_turns(user) < count:
        assert time.monotonic() < deadline, f"{limits.waiting_turns(user)} questions waiting, not {count}"
        time.sleep(0.2)


def test_questions_saved_while_redis_is_down_wait_and_do_not_block_the_next(
    start_worker, fault_model, owner_api, web_broker_on, settings
):
    settings.ANALYST_LIMIT_CONCURRENT_TURNS = 1
    settings.ANALYST_LIMIT_WAITING_TURNS = 2
    redis = web_broker_on
    client, alice = owner_api
    first, second, third, fourth = (new_session(alice) for _ in range(4))
    start_worker(fault_model, REDIS_URL=redis.url)

    redis.stop()
    waiting = [saved_for_later(client, first, "First")]
    until_waiting(alice, 1)
    # Not refused 429 for the first: that one is not running, it waits for the queue.
    waiting.append(saved_for_later(client, second, "Second"))
    until_waiting(alice, 2)
    refused = client.post(f"/api/sessions/{third.id}/messages", {"content": "Third"}, "application/json")
    assert refused.status_code == 429, refused.content
    error = refused.json()["error"]
    assert error["code"] == "waiting_turns"
    assert error["message"].startswith("You have 2 requests saved while the task queue was unreachable")
    assert not third.turns.exists()

    fault_model.script(anthropic_text("One."), anthropic_text("Two."), anthropic_text("Four."))
    redis.start()  # the same port, nothing kept
    for session, turn in zip((first, second), waiting, strict=True):
        assert wait_for_event(session, turn, timeout=60)[-1]["type"] == "turn_done"
    assert limits.waiting_turns(alice) == 0
    assert wait_for_event(fourth, ask(client, fourth, "Fourth"), timeout=60)[-1]["type"] == "turn_done"
    for session in (first, second, fourth):
        assert_log_invariants(session)
