"""A worker's pool process killed (the OOM killer picks exactly these) while the worker lives, and
one of two workers killed whole: the turn it ran ends, said so, within a bound, and the session
takes the next question. Before, such a turn stayed `running` until some worker restarted."""

from tests.fakes.model_server import anthropic_text, anthropic_tool_call
from tests.faults.turns.workers import (
    ask,
    assert_log_invariants,
    kill_pool_processes,
    new_session,
    wait_for_event,
)

SLOW_CELL = {"code": "import time\ntime.sleep(120)"}


def test_a_killed_pool_process_ends_its_turn_and_the_session_goes_on(start_worker, fault_model, owner_api):
    client, alice = owner_api
    worker = start_worker(fault_model)
    session = new_session(alice)
    fault_model.script(anthropic_tool_call("run_python", SLOW_CELL))
    turn = ask(client, session, "Take your time")
    wait_for_event(session, turn, "tool_call")

    kill_pool_processes(worker)
    log = wait_for_event(session, turn, timeout=30)
    assert log[-1]["type"] == "turn_failed"
    assert "worker running this turn stopped" in log[-1]["payload"]["reason"]
    assert worker.process.poll() is None, "the worker itself lived on"

    # The cell the dead process left running is interrupted: the next one runs at once.
    fault_model.script(anthropic_tool_call("run_python", {"code": "21 * 2"}), anthropic_text("Back again."))
    follow_up = ask(client, session, "Still there?")
    log = wait_for_event(session, follow_up, timeout=60)
    assert log[-1]["type"] == "turn_done", [e["type"] for e in log]
    assert not [e for e in log if e["type"] == "error"], "the kernel was free for the next cell"
    assert any("42" in str(e["payload"]) for e in log if e["type"] == "result")
    assert_log_invariants(session)


def test_the_surviving_worker_ends_the_turns_of_one_that_died(start_worker, fault_model, owner_api):
    client, alice = owner_api
    workers = [start_worker(fault_model), start_worker(fault_model)]
    session = new_session(alice)
    fault_model.script(anthropic_tool_call("run_python", SLOW_CELL))
    turn = ask(client, session, "Take your time")
    wait_for_event(session, turn, "tool_call")
    (running,) = [w for w in workers if "run_turn" in w.read_log() and "received" in w.read_log()]
    running.kill()

    log = wait_for_event(session, turn, timeout=30)
    assert log[-1]["type"] == "turn_failed"
    fault_model.script(anthropic_text("The other worker answers."))
    follow_up = ask(client, session, "Anyone?")
    assert wait_for_event(session, follow_up, timeout=60)[-1]["type"] == "turn_done"
    assert_log_invariants(session)
