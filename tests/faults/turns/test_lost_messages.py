"""A turn's task, or an upload's placement, lost on the way: Redis restarted without its data
(compose ran it without persistence) after the request was stored. The row is the truth: a
worker's reconciler sends the work again and it is done, once."""

import time

import redis
from django.conf import settings

from analyst.models import DataFile
from analyst.realtime import events
from tests.api.conftest import upload
from tests.fakes.model_server import anthropic_text, anthropic_tool_call
from tests.faults.turns.workers import ask, assert_log_invariants, new_session, wait_for_event
from tests.printed import printed


def restart_redis_keeping_nothing() -> None:
    """This run's queue (and only it) is emptied, as a restart of a Redis that keeps nothing."""
    queue = settings.CELERY_TASK_DEFAULT_QUEUE
    broker = redis.Redis.from_url(settings.REDIS_URL)
    assert broker.llen(queue) >= 1, "the message was in the queue"
    broker.delete(queue)


def test_a_turn_whose_message_redis_lost_runs_once_a_worker_is_back(start_worker, fault_model, owner_api):
    client, alice = owner_api
    session = new_session(alice)
    turn = ask(client, session, "Count it")  # stored and sent; no worker is up to take it

    restart_redis_keeping_nothing()

    fault_model.script(anthropic_tool_call("run_python", {"code": "print('ran')"}), anthropic_text("Once."))
    start_worker(fault_model)
    log = wait_for_event(session, turn, timeout=60)
    assert log[-1]["type"] == "turn_done"
    assert printed(log) == "ran\n", "the cell ran once"
    assert [e["type"] for e in log].count("turn_started") == 1
    assert_log_invariants(session)


def test_an_upload_whose_placement_redis_lost_is_placed_once_a_worker_is_back(
    start_worker, fault_model, owner_api
):
    client, alice = owner_api
    session = new_session(alice)
    response = upload(client, session, "sales.csv", b"region,sales\nnorth,10\nsouth,7\n")
    assert response.status_code == 202, response.content
    restart_redis_keeping_nothing()

    start_worker(fault_model)
    deadline = time.monotonic() + 60
    while not [e for e in events.after(session.id, 0) if e["type"] == "file_added"]:
        assert time.monotonic() < deadline, f"not placed: {[e['type'] for e in events.after(session.id, 0)]}"
        time.sleep(0.2)
    placed = DataFile.objects.get(session=session)
    assert (placed.placement, placed.rows, placed.columns) == (DataFile.Placement.READY, 2, 2)
    time.sleep(3)  # a reconciler pass or two later: nothing placed twice
    assert [e["type"] for e in events.after(session.id, 0)].count("file_added") == 1
