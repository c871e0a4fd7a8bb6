"""The JSON API's live stream (server-sent events) after a Redis restart emptied its groups: its
keep-alive joins them again and asks the log, so every later event still arrives, once, in order."""

from __future__ import annotations

import json
import time

import httpx

from analyst.models import ApiToken
from analyst.realtime import events
from tests.faults.follower import WAIT


def test_the_event_stream_gets_every_event_after_a_redis_restart(
    live_view_session, web_on_faulty_redis, faulty_redis_layer
):
    owner, session = live_view_session
    _, secret = ApiToken.issue(owner)
    events.append(session.id, "stdout", {"text": "1"})
    url = f"{web_on_faulty_redis.replace('ws://', 'http://')}/api/sessions/{session.id}/events"
    headers = {"Authorization": f"Bearer {secret}", "Accept": "text/event-stream"}
    seqs: list[int] = []
    with httpx.stream("GET", url, headers=headers, timeout=WAIT) as response:
        lines = response.iter_lines()

        def read_through(seq: int) -> None:
            deadline = time.monotonic() + WAIT
            while not seqs or seqs[-1] < seq:
                assert time.monotonic() < deadline, f"gave up: seqs {seqs}"
                line = next(lines)  # keep-alive comments come every heartbeat interval
                if line.startswith("data: "):
                    seqs.append(json.loads(line[len("data: ") :])["seq"])

        read_through(1)
        faulty_redis_layer.restart()
        for n in range(2, 6):
            events.append(session.id, "stdout", {"text": str(n)})
        read_through(5)
        events.append(session.id, "stdout", {"text": "6"})
        read_through(6)
    assert seqs == [1, 2, 3, 4, 5, 6]
