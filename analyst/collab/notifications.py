"""Notifications: a new comment tells the session's participants (its owner, whoever asked or ran
a cell in it, whoever commented on it; never the comment's author, and only those who may still
read it); a user lists theirs, unread first, and marks them read."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import F, QuerySet
from django.http import Http404
from django.utils import timezone

from analyst.collab import live
from analyst.models import AnalysisSession, Comment, Notification
from analyst.sessions import sessions

EXCERPT = 120  # characters of the comment a notification quotes
PAGE = 20
MAX_PAGE = 100


def participants(session: AnalysisSession) -> set[int]:
    """Ids of the session's owner, of those who started a turn in it and of its commenters."""
    asked = session.turns.values_list("requested_by_id", flat=True)
    commented = session.comments.exclude(author=None).values_list("author_id", flat=True)
    return {session.owner_id, *asked, *commented}


def do_notify_comment(comment: Comment) -> list[Notification]:
    """A notification of ``comment`` for each participant but its author who may still read the
    session; each is told their new unread count once committed."""
    session = comment.session
    author = comment.author.get_username() if comment.author is not None else "someone"
    excerpt = comment.text if len(comment.text) <= EXCERPT else comment.text[: EXCERPT - 1] + "…"
    text = f"{author} commented on “{session.title}”: {excerpt}"[:300]
    readers = [
        user
        for user in get_user_model().objects.filter(id__in=participants(session) - {comment.author_id})
        if sessions.role_in(user, session) is not None
    ]
    made = Notification.objects.bulk_create(
        [Notification(user=user, session=session, comment=comment, text=text) for user in readers]
    )
    for user in readers:
        live.send_to_user(user.pk, live.notifications_message(unread_count(user)))
    return made


def unread_count(user: AbstractBaseUser) -> int:
    return Notification.objects.filter(user=user, read_at=None).count()


def listed(user: AbstractBaseUser, *, offset: int = 0, limit: int = PAGE) -> tuple[list[Notification], bool]:
    """A page of the user's notifications, unread first, newest first within each; and whether
    more follow."""
    ordered = _theirs(user).order_by(F("read_at").asc(nulls_first=True), "-created_at", "-id")
    page = list(ordered.select_related("session", "comment")[offset : offset + limit + 1])
    return page[:limit], len(page) > limit


def as_dict(notification: Notification) -> dict[str, Any]:
    comment = notification.comment
    seq = comment.seq if comment is not None else None
    where = f"#comment-{comment.id}" if comment is not None else ""
    return {
        "id": notification.id,
        "session": str(notification.session_id),
        "seq": seq,
        "text": notification.text,
        "url": f"/sessions/{notification.session_id}/{where}",
        "created_at": notification.created_at.isoformat(),
        "read": notification.read_at is not None,
    }


def do_mark_read(user: AbstractBaseUser, notification_id: object) -> Notification:
    """Mark one of the user's notifications read (Http404 for anyone else's)."""
    try:
        notification = _theirs(user).get(id=int(str(notification_id)))
    except (Notification.DoesNotExist, ValueError):
        raise Http404("no such notification") from None
    if notification.read_at is None:
        notification.read_at = timezone.now()
        notification.save(update_fields=["read_at"])
    return notification


def do_mark_all_read(user: AbstractBaseUser) -> int:
    return _theirs(user).filter(read_at=None).update(read_at=timezone.now())


def do_forget_unreadable(user: AbstractBaseUser) -> int:
    """Delete the user's notifications of sessions they may no longer read (they left a
    workspace, or were removed from it): what those said is no longer theirs to see."""
    noted = AnalysisSession.objects.filter(id__in=_theirs(user).values("session_id")).select_related(
        "workspace"
    )
    unreadable = [session.id for session in noted if sessions.role_in(user, session) is None]
    return _theirs(user).filter(session_id__in=unreadable).delete()[0]


def _theirs(user: AbstractBaseUser) -> QuerySet[Notification]:
    return Notification.objects.filter(user=user)
