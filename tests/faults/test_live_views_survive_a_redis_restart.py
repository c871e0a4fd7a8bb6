"""A Redis restart empties every Channels group: two live views of one session still get every
later event, once each and in order (or are closed and, back with ?after=, get the log), heartbeats
keep coming, and both are back in the session's group."""

from __future__ import annotations

from analyst.realtime import events
from tests.faults.follower import Follower


def test_two_live_views_get_every_event_after_a_redis_restart(
    live_view_session, open_live_view, faulty_redis_layer
):
    owner, session = live_view_session
    path = f"/ws/sessions/{session.id}/"
    views = [Follower(open_live_view, path, owner) for _ in range(2)]
    for n in (1, 2):
        events.append(session.id, "stdout", {"text": f"before {n}"})
    for view in views:
        view.read_through(2)

    faulty_redis_layer.restart()
    for n in range(3, 9):
        events.append(session.id, "stdout", {"text": f"after {n}"})

    for view in views:
        view.read_through(8)
        assert view.seqs == list(range(1, 9)), view.closes  # each once, in order
        view.wait_for_heartbeat()  # and the heartbeat goes on after the restart
        assert view.heartbeats[-1]["seq"] == 8

    # Back in the group, not only catching up from the log: a broadcast the log does not hold.
    events.broadcast(session.id, {"seq": 9, "type": "notice", "payload": {}, "turn": None, "created_at": ""})
    for view in views:
        view.read_through(9)
        assert view.seqs == list(range(1, 10))
