"""The worker SIGKILLed at a random point of a turn (before its claim, while the model streams, in
its cell, while it saves the kernel, after its end), again and again: every turn still ends
exactly once within a bound, seqs stay gap-free, nothing runs twice, and the next turn works.

CHAOS_ITERATIONS sets the rounds (`make chaos` runs 20; `make test` a short 3); CHAOS_SEED
replays a run (each failure prints its seed).
"""

import os
import random
import time

import pytest

from analyst.realtime import events
from tests.fakes.model_server import ScriptedModelServer, anthropic_text, anthropic_tool_call
from tests.faults.turns.workers import ask, assert_log_invariants, new_session, wait_for_event
from tests.printed import printed

ITERATIONS = int(os.environ.get("CHAOS_ITERATIONS", "3"))
SEED = int(os.environ.get("CHAOS_SEED", str(time.time_ns() % 1_000_000)))


@pytest.mark.timeout(60 + 40 * ITERATIONS)
def test_worker_killed_at_random_points(start_worker, owner_api):
    chance = random.Random(SEED)
    client, alice = owner_api
    session = new_session(alice)
    for round in range(ITERATIONS):
        context = f"seed {SEED}, round {round}"
        with (
            ScriptedModelServer(expect_all_used=False) as doomed,
            ScriptedModelServer(expect_all_used=False) as rescue,
        ):
            nap = chance.uniform(0, 0.8)
            code = f"import time\nprint('round {round}')\ntime.sleep({nap:.2f})\nx_{round} = {round}"
            doomed.script(
                anthropic_tool_call("run_python", {"code": code}, tool_id=f"toolu_r{round}"),
                anthropic_text("Done."),
            )
            rescue.script(*[anthropic_text("Recovered.")] * 4)
            worker = start_worker(doomed)
            turn = ask(client, session, f"Round {round}")
            time.sleep(chance.uniform(0, 1.5 + nap))
            worker.kill()

            survivor = start_worker(rescue)
            log = wait_for_event(session, turn, timeout=45)
            assert log[-1]["type"] in ("turn_done", "turn_failed"), context
            follow_up = ask(client, session, f"After round {round}")
            assert wait_for_event(session, follow_up, timeout=60)[-1]["type"] == "turn_done", context
            survivor.stop()

        assert_log_invariants(session)
        log = events.after(session.id, 0, limit=100_000)
        calls = [e["payload"]["id"] for e in log if e["type"] == "tool_call"]
        assert len(calls) == len(set(calls)), f"a cell ran twice ({context}): {calls}"
        assert printed(log).count(f"round {round}\n") <= 1, f"the cell of round {round} ran twice ({context})"
