"""The event log's one door: event dicts, group names, and append-then-broadcast."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.db import connection, transaction
from django.db.models import TextField
from django.db.models.functions import Cast

from analyst.models import AnalysisSession, Event, Turn
from analyst.realtime import broadcast as broadcaster

# Every type a client may see.
TYPES = frozenset(
    {
        "user_message",
        "cell",
        "turn_started",
        "model_retry",
        "assistant_delta",
        "assistant_message",
        "tool_call",
        "cell_pending",
        "cell_decided",
        "stdout",
        "stderr",
        "result",
        "error",
        "cell_done",
        "saving",
        "notice",
        "kernel_restored",
        "kernel_resumed",
        "forked",
        "files_waiting",
        "file_added",
        "file_removed",
        "turn_done",
        "turn_cancelled",
        "turn_failed",
    }
)


def group_name(session_id: object) -> str:
    return f"session.{session_id}"


def as_dict(event: Event) -> dict[str, Any]:
    return {
        "seq": event.seq,
        "type": event.type,
        "payload": event.payload,
        "turn": event.turn_id,
        "created_at": event.created_at.isoformat(),
    }


def append(session_id: object, type: str, payload: dict[str, Any], *, turn: Turn | None = None) -> Event:
    """Store the event with the session's next seq, then broadcast it once committed."""
    if type not in TYPES:
        raise ValueError(f"unknown event type {type!r}")
    with transaction.atomic():
        seq = _take_seq(session_id)
        event = Event.objects.create(session_id=session_id, turn=turn, seq=seq, type=type, payload=payload)
        transaction.on_commit(lambda: broadcast(session_id, as_dict(event)))
    return event


def _take_seq(session_id: object) -> int:
    """The session's next seq, bumped in one statement (the row stays locked until commit)."""
    table = AnalysisSession._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET next_seq = next_seq + 1 WHERE id = %s RETURNING next_seq",  # noqa: S608
            [AnalysisSession._meta.pk.get_db_prep_value(session_id, connection)],
        )
        row = cursor.fetchone()
    if row is None:
        raise AnalysisSession.DoesNotExist(f"no session {session_id}")
    return row[0] - 1


def broadcast(session_id: object, event: dict[str, Any]) -> None:
    broadcaster.group_send(group_name(session_id), {"type": "session.event", "event": event})


FIELDS = ("seq", "type", "payload", "turn_id", "created_at")


def after_as_json(session_id: object, seq: int, limit: int = 1000) -> list[tuple[str, str, str]]:
    """The events ``after`` returns, each as JSON text in two parts, (type, payload, the rest):
    the payload as stored, not decoded to be encoded again (a page catching up on a long log
    waits for this). ``as_json`` puts an event's parts together."""
    rows = (
        Event.objects.filter(session_id=session_id, seq__gt=seq)
        .order_by("seq")
        .values_list("seq", "type", Cast("payload", TextField()), "turn_id", Cast("created_at", TextField()))
    )
    return [
        (
            kind,
            payload,
            # A type is one of TYPES, a seq and a turn whole numbers: nothing there to escape.
            f'"seq": {number:d}, "type": "{kind}", "turn": {"null" if turn is None else f"{turn:d}"}, '
            f'"created_at": "{_isoformat(created)}"',
        )
        for number, kind, payload, turn, created in rows[:limit]
    ]


def _isoformat(stored: str) -> str:
    """A stored time read as text, as ``as_dict`` gives it (half the CPU of the page's read was
    Django turning each into a datetime); SQLite keeps UTC without an offset."""
    moment = datetime.fromisoformat(stored)
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).isoformat()


def as_json(rest: str, payload: str) -> str:
    """An event's JSON from the parts ``after_as_json`` gives (the payload perhaps changed)."""
    return f'{{{rest}, "payload": {payload}}}'


def after(session_id: object, seq: int, limit: int = 1000) -> list[dict[str, Any]]:
    """Stored events with a seq above ``seq``, oldest first, as ``as_dict`` makes them (read as
    rows, not model instances: a page loading a long log waits for this)."""
    rows = Event.objects.filter(session_id=session_id, seq__gt=seq).order_by("seq").values_list(*FIELDS)
    return [
        {"seq": number, "type": kind, "payload": payload, "turn": turn, "created_at": created.isoformat()}
        for number, kind, payload, turn, created in rows[:limit]
    ]
