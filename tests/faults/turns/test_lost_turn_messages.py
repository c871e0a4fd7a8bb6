"""A turn's task lost on the way: Redis restarted without its data (compose ran it without
persistence) after the question was stored, or the web process could not reach it at all. The
row is the truth: a worker's reconciler sends the turn again and it runs, once."""

import redis
from django.conf import settings

from tests.fakes.model_server import anthropic_text, anthropic_tool_call
from tests.faults.turns.workers import ask, assert_log_invariants, new_session, wait_for_event


def test_a_turn_whose_message_redis_lost_runs_once_a_worker_is_back(start_worker, fault_model, owner_api):
    client, alice = owner_api
    session = new_session(alice)
    turn = ask(client, session, "Count it")  # stored and sent; no worker is up to take it

    # Redis restarts and keeps nothing: this run's queue (and only it) is emptied.
    queue = settings.CELERY_TASK_DEFAULT_QUEUE
    broker = redis.Redis.from_url(settings.REDIS_URL)
    assert broker.llen(queue) >= 1, "the message was in the queue"
    broker.delete(queue)

    fault_model.script(anthropic_tool_call("run_python", {"code": "print('ran')"}), anthropic_text("Once."))
    start_worker(fault_model)
    log = wait_for_event(session, turn, timeout=60)
    assert log[-1]["type"] == "turn_done"
    assert [e["payload"]["text"] for e in log if e["type"] == "stdout"] == ["ran\n"], "the cell ran once"
    assert [e["type"] for e in log].count("turn_started") == 1
    assert_log_invariants(session)
