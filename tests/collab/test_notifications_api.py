"""A comment notifies the session's participants who may still read it, never its author; each
lists theirs unread first and paged, and marks them read; the header's bell counts them."""

from __future__ import annotations

import pytest

from analyst.models import Comment, Notification
from tests.workspaces.conftest import bearer_client, client_of, membership, user

pytestmark = pytest.mark.django_db(transaction=True)


def comment(name, session, text, seq=4):
    made = client_of(name).post(
        f"/api/sessions/{session.id}/comments", {"seq": seq, "text": text}, "application/json"
    )
    assert made.status_code == 201, made.json()
    return made.json()


def notified(session) -> set[str]:
    return set(Notification.objects.filter(session=session).values_list("user__username", flat=True))


def test_the_owner_the_asker_and_the_commenters_are_notified_not_the_author(session, team, mallory):
    made = comment("vic", session, "Is North net of returns?")
    assert notified(session) == {"eve", "olga"}  # the owner, and who asked; adam took no part
    mine = client_of("eve").get("/api/notifications").json()
    assert mine["unread"] == 1 and not mine["more"]
    assert mine["notifications"][0] | {"id": 0, "created_at": "…"} == {
        "id": 0,
        "session": str(session.id),
        "seq": 4,
        "text": "vic commented on “Q3 sales”: Is North net of returns?",
        "url": f"/sessions/{session.id}/#comment-{made['id']}",
        "created_at": "…",
        "read": False,
    }

    Notification.objects.all().delete()
    comment("adam", session, "Yes, net.")  # vic commented before: vic is a participant now
    assert notified(session) == {"eve", "olga", "vic"}
    assert bearer_client(mallory).get("/api/notifications").json() == {
        "notifications": [],
        "unread": 0,
        "more": False,
    }


def test_a_removed_member_is_not_notified_and_loses_what_they_had(session, team):
    comment("vic", session, "First")
    assert client_of("eve").get("/api/notifications").json()["unread"] == 1
    removed = client_of("olga").delete(f"/api/workspaces/{team.id}/members/{membership(team, 'eve').id}")
    assert removed.status_code == 200
    assert client_of("eve").get("/api/notifications").json() == {
        "notifications": [],
        "unread": 0,
        "more": False,
    }
    comment("adam", session, "Second")
    assert notified(session) == {"olga", "vic"}  # eve's session, which she may no longer read


def test_unread_first_newest_first_paged_and_marked_read(session):
    for n in range(3):
        comment("vic", session, f"note {n}")
    eve = client_of("eve")
    first = eve.get("/api/notifications?limit=2").json()
    assert [n["text"][-6:] for n in first["notifications"]] == ["note 2", "note 1"] and first["more"]
    oldest = eve.get("/api/notifications?limit=2&offset=2").json()["notifications"][0]
    assert eve.post(f"/api/notifications/{oldest['id']}/read").json() == {"unread": 2}
    listed = eve.get("/api/notifications").json()
    assert [(n["text"][-6:], n["read"]) for n in listed["notifications"]] == [
        ("note 2", False),
        ("note 1", False),
        ("note 0", True),
    ]
    assert eve.post("/api/notifications/read").json() == {"marked": 2, "unread": 0}
    assert eve.get("/api/notifications").json()["unread"] == 0


def test_nobody_marks_anothers_notification(session, mallory):
    comment("vic", session, "Look")
    theirs = Notification.objects.get(user=user("eve"))
    for client in (client_of("olga"), bearer_client(mallory)):
        assert client.post(f"/api/notifications/{theirs.id}/read").status_code == 404
    theirs.refresh_from_db()
    assert theirs.read_at is None
    assert client_of("eve").get("/api/notifications?limit=x").status_code == 400


def test_a_deleted_comment_takes_its_notifications(session):
    made = comment("vic", session, "Oops")
    assert client_of("vic").delete(f"/api/sessions/{session.id}/comments/{made['id']}").status_code == 204
    assert not Comment.objects.exists() and not Notification.objects.exists()


def test_the_bell_counts_the_unread(session, client):
    comment("vic", session, "Look")
    comment("vic", session, "And here", seq=2)
    client.force_login(user("eve"))
    page = client.get("/sessions/").content.decode()
    assert 'data-testid="bell-count">2</span>' in page
    client.force_login(user("adam"))
    assert 'data-testid="bell-count" hidden>0</span>' in client.get("/sessions/").content.decode()
