"""The live messages of working together, and the per-user group that carries a user's own: built
here only, sent through the channel layer once the change is committed.

A session's group (analyst.realtime.events.group_name) carries presence and comments to every open
page of it; ``user_group`` carries a user's unread count and the news that their access changed.
None of these is stored in the event log: a page that reconnects reads them again (presence on
connect, comments and notifications over HTTP)."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from analyst.realtime import broadcast
from analyst.realtime.events import group_name


def user_group(user_id: object) -> str:
    return f"user.{user_id}"


def presence_message(users: list[str]) -> dict[str, Any]:
    return {"type": "session.presence", "users": users}


def comment_message(comment: dict[str, Any]) -> dict[str, Any]:
    return {"type": "session.comment", "comment": comment}


def uncomment_message(comment_id: int) -> dict[str, Any]:
    return {"type": "session.uncomment", "id": comment_id}


def notifications_message(unread: int) -> dict[str, Any]:
    return {"type": "user.notifications", "unread": unread}


def access_message() -> dict[str, Any]:
    return {"type": "user.access"}


def send_to_session(session_id: object, message: dict[str, Any]) -> None:
    """``message`` to every open page of the session, once the current transaction commits."""
    transaction.on_commit(lambda: broadcast.group_send(group_name(session_id), message))


def send_to_user(user_id: object, message: dict[str, Any]) -> None:
    """``message`` to every open page of the user's, once the current transaction commits."""
    transaction.on_commit(lambda: broadcast.group_send(user_group(user_id), message))
