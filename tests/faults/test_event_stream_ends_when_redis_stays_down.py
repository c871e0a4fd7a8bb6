"""The JSON API's live stream ends (rather than hanging open and silent) when the channel layer
fails for good, so its client reconnects with ?after=."""

from __future__ import annotations

import json

import httpx

from analyst.models import ApiToken
from analyst.realtime import events
from tests.faults.follower import WAIT


def test_the_event_stream_ends_when_redis_is_gone(live_view_session, web_on_faulty_redis, faulty_redis_layer):
    owner, session = live_view_session
    _, secret = ApiToken.issue(owner)
    events.append(session.id, "stdout", {"text": "1"})
    url = f"{web_on_faulty_redis.replace('ws://', 'http://')}/api/sessions/{session.id}/events"
    headers = {"Authorization": f"Bearer {secret}", "Accept": "text/event-stream"}
    # A read that waits longer than WAIT fails the test (httpx.ReadTimeout): the stream hung.
    with httpx.stream("GET", url, headers=headers, timeout=WAIT) as response:
        lines = response.iter_lines()
        assert json.loads(next(line for line in lines if line.startswith("data: "))[6:])["seq"] == 1
        faulty_redis_layer.stop()
        rest = list(lines)  # ends: keep-alive comments at most, then the end of the response
    assert all(line.startswith(":") or not line for line in rest), rest
