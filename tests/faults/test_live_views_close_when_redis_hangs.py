"""A channel layer that stops answering (Redis hung) closes live views with LAYER_LOST rather
than leaving them open and deaf; back with ?after=, a view gets exactly the events stored meanwhile."""

from __future__ import annotations

from analyst.realtime import events
from analyst.web.consumers import LAYER_LOST
from tests.faults.follower import Follower


def test_a_live_view_closes_while_redis_hangs_and_catches_up_after(
    live_view_session, open_live_view, faulty_redis_layer
):
    owner, session = live_view_session
    events.append(session.id, "stdout", {"text": "1"})
    view = Follower(open_live_view, f"/ws/sessions/{session.id}/", owner)
    view.read_through(1)
    view.wait_for_heartbeat()  # the replay on connect is over

    with faulty_redis_layer.paused():
        events.append(session.id, "stdout", {"text": "2"})  # stored; its broadcast waits for Redis
        events.append(session.id, "stdout", {"text": "3"})
        view.wait_for_close()
    assert view.closes == [LAYER_LOST]

    view.reconnect()  # with ?after= the last seq it got
    view.read_through(3)
    view.wait_for_heartbeat()
    view.wait_for_heartbeat()  # time for a late copy of an event to show up, if one were sent
    assert view.seqs == [1, 2, 3]
