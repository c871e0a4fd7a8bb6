"""Revoking a share link after a Redis restart (which emptied the link's group) still closes the
sockets open on it."""

from __future__ import annotations

from analyst.models import ShareLink
from analyst.sessions import shares
from tests.faults.follower import Follower


def test_revoking_after_a_redis_restart_closes_the_open_share_sockets(
    live_view_session, open_live_view, faulty_redis_layer
):
    _, session = live_view_session
    link = ShareLink.objects.create(session=session)
    view = Follower(open_live_view, f"/ws/shared/{link.token}/", None)
    view.wait_for_heartbeat()

    faulty_redis_layer.restart()
    view.wait_for_heartbeat()
    shares.do_revoke(session=session, link_id=link.id)
    view.wait_for_close()
    assert view.closes[-1] == 4404
