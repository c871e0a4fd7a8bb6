"""One cell's output in the event log is bounded in bytes (ANALYST_CELL_EVENT_BYTES): 60 displays of
20 KB texts (inline parts, not artifacts) and a 100 KB exception message stored whole before; now
what fits, one notice in the cell, and its error shortened; the turn ends well and the next cell
stores its output whole."""

from __future__ import annotations

import json

from tests.integration.conftest import wait_for
from tests.integration.test_full_disk_in_a_turn import post_cell, turn_ends

LIMIT = 200_000
FLOOD = (
    "for i in range(60): display({'text/plain': str(i) + ' ' + 'y' * 20_000}, raw=True)\n"
    "raise ValueError('v' * 100_000)"
)
OUTPUT = ("stdout", "stderr", "result", "error")


def stored_bytes(events):
    outputs = [e["payload"] for e in events if e["type"] in OUTPUT]
    return sum(len(json.dumps(payload, ensure_ascii=False).encode()) for payload in outputs)


def test_a_cell_stores_at_most_its_budget_with_one_notice(transactional_db, extra_worker, api, session):
    extra_worker(ANALYST_CELL_EVENT_BYTES=str(LIMIT))
    post_cell(api, session, FLOOD)
    log = wait_for(session)
    assert log[-1]["type"] == "turn_done", log[-1]
    results = [e["payload"] for e in log if e["type"] == "result"]
    assert 5 < len(results) < 60
    assert results[0]["data"]["text/plain"].startswith("0 yyy")
    stderr = [e["payload"]["text"] for e in log if e["type"] == "stderr"]
    notices = [text for text in stderr if "output not kept" in text]
    assert notices == [
        f"\n[output not kept: this cell's output passed {LIMIT} bytes; the rest of it is not stored or"
        " shown (the model still read its share)]\n"
    ]
    errors = [e["payload"] for e in log if e["type"] == "error"]
    assert [error["name"] for error in errors] == ["ValueError"]
    assert len(errors[0]["value"]) < 10_000 and errors[0]["value"].endswith("characters in all]")
    assert [e["payload"] for e in log if e["type"] == "cell_done"] == [{"failed": True}]
    assert stored_bytes(log) < LIMIT + 2 * 10_000 + 1_000  # the budget, the error's two cut texts, the notice

    post_cell(api, session, "print('next')")
    later = turn_ends(session, 2)[len(log) :]
    assert [e["payload"]["text"] for e in later if e["type"] == "stdout"] == ["next\n"]
    assert not any(e["type"] == "stderr" for e in later)
