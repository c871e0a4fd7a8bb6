"""Redis down, then back empty (compose ran it without persistence): a question asked meanwhile
is kept (503 JSON, not an HTML 500) and runs once Redis is back; the worker itself reconnects, and
the next question runs as usual. Web and worker use a Redis of the test's own."""

from tests.fakes.model_server import anthropic_text
from tests.faults.turns.workers import ask, assert_log_invariants, new_session, wait_for_event


def test_a_question_asked_while_redis_is_down_runs_once_it_is_back(
    start_worker, fault_model, owner_api, web_broker_on
):
    redis = web_broker_on
    client, alice = owner_api
    session = new_session(alice)
    start_worker(fault_model, REDIS_URL=redis.url)
    fault_model.script(anthropic_text("One."))
    assert wait_for_event(session, ask(client, session, "First"), timeout=60)[-1]["type"] == "turn_done"

    redis.stop()
    response = client.post(f"/api/sessions/{session.id}/messages", {"content": "Second"}, "application/json")
    assert response.status_code == 503, response.content
    assert response.json()["error"]["code"] == "queue_unavailable"
    waiting = response.json()["turn"]

    fault_model.script(anthropic_text("Two."))
    redis.start()  # the same port, nothing kept
    log = wait_for_event(session, waiting, timeout=60)
    assert log[-1]["type"] == "turn_done"
    assert [e["type"] for e in log].count("turn_started") == 1

    fault_model.script(anthropic_text("Three."))
    assert wait_for_event(session, ask(client, session, "Third"), timeout=60)[-1]["type"] == "turn_done"
    assert_log_invariants(session)
