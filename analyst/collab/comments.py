"""Comments on a session's cells and answers: checked, added (telling the open pages and the
session's participants), listed and deleted by their author or an admin."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import Http404

from analyst.audit import records as audit_records
from analyst.collab import live, notifications
from analyst.models import AnalysisSession, Comment
from analyst.sessions import sessions
from analyst.workspaces import roles
from analyst.workspaces.roles import Role

MAX_LENGTH = 4000
# What a comment may be on: a question, a cell (the user's or the model's) and an answer.
COMMENTABLE = ("user_message", "cell", "tool_call", "assistant_message")


class InvalidComment(ValueError):
    """The comment's text or seq is refused; ``str()`` says why."""


def check_text(text: object) -> str:
    if not isinstance(text, str) or not text.strip():
        raise InvalidComment("'text' must be a non-empty string")
    if len(text) > MAX_LENGTH:
        raise InvalidComment(f"a comment is at most {MAX_LENGTH:,} characters; this one is {len(text):,}")
    return text.strip()


def check_seq(session: AnalysisSession, seq: object) -> int:
    """The seq of a question, a cell or an answer of the session."""
    if not isinstance(seq, int) or isinstance(seq, bool):
        raise InvalidComment("'seq' must be the seq of a question, a cell or an answer of this session")
    if not session.events.filter(seq=seq, type__in=COMMENTABLE).exists():
        raise InvalidComment(f"'seq': this session has no question, cell or answer with seq {seq}")
    return seq


def listed(session: AnalysisSession) -> list[Comment]:
    return list(session.comments.select_related("author").order_by("created_at", "id"))


def as_dict(comment: Comment) -> dict[str, Any]:
    return {
        "id": comment.id,
        "seq": comment.seq,
        "text": comment.text,
        "author": comment.author.get_username() if comment.author is not None else None,
        "created_at": comment.created_at.isoformat(),
    }


@transaction.atomic
def do_add(*, session: AnalysisSession, author: AbstractBaseUser, seq: int, text: str) -> Comment:
    """Store the comment (``check_seq`` and ``check_text`` passed), notify the session's
    participants, and send it to every open page of the session once committed."""
    comment = Comment.objects.create(session=session, author=author, seq=seq, text=text)
    notifications.do_notify_comment(comment)
    audit_records.record_for_session(
        "comment_add", session, user=author, detail={"seq": seq, "id": comment.id}
    )
    live.send_to_session(session.id, live.comment_message(as_dict(comment)))
    return comment


def get(session: AnalysisSession, comment_id: object) -> Comment:
    try:
        return session.comments.select_related("author").get(id=int(str(comment_id)))
    except (Comment.DoesNotExist, ValueError):
        raise Http404("no such comment") from None


def check_may_delete(comment: Comment, user: AbstractBaseUser) -> None:
    """Its author may delete a comment, and so may an admin or an owner of the workspace."""
    if comment.author_id == user.pk:
        return
    if not roles.at_least(sessions.role_in(user, comment.session), Role.ADMIN):
        workspace = roles.workspace_of(comment.session).name
        raise PermissionDenied(f"only its author or an admin of {workspace} may delete a comment")


@transaction.atomic
def do_delete(*, comment: Comment, by: AbstractBaseUser) -> None:
    """Delete the comment (``check_may_delete`` passed), with its notifications, and take it off
    every open page."""
    session, comment_id = comment.session, comment.id
    comment.delete()
    audit_records.record_for_session("comment_delete", session, user=by, detail={"id": comment_id})
    live.send_to_session(session.id, live.uncomment_message(comment_id))
