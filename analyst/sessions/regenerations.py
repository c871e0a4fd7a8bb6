"""Regenerate: the session's last question asked again, its earlier answer superseded.

The request is a new chat turn naming the old one (``Turn.regenerates``). When it runs (the
worker: TurnRunner.undo_earlier_answer), the old answer's messages leave the model's history, so
later turns see only the new answer; its events stay in the log, where the page folds them
away. When the old answer ran code, the kernel is first put back as it was before the question
(from the snapshot taken after the turn before it, or an empty kernel with the files when no
code had run before); when that snapshot is no longer kept, the new answer runs in the current
kernel, and says so.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.http import Http404

from analyst.models import AnalysisSession, Turn
from analyst.turns import turns


class NotTheLastAnswer(Exception):
    """Only the session's last turn, a question, can be asked again."""


def get_turn(session: AnalysisSession, turn_id: object) -> Turn:
    """A turn of ``session``; Http404 for any other id."""
    try:
        return session.turns.get(id=turn_id)
    except (Turn.DoesNotExist, ValueError, TypeError):
        raise Http404("no such turn in this session") from None


def check_regenerable(session: AnalysisSession, turn: Turn) -> Turn:
    """``turn`` is the session's last turn and a question; NotTheLastAnswer otherwise."""
    if turn.kind != Turn.Kind.CHAT:
        raise NotTheLastAnswer("only a question's answer can be regenerated")
    if session.turns.filter(id__gt=turn.id).exists():
        raise NotTheLastAnswer("only the last answer of the session can be regenerated; ask again instead")
    return turn


def do_regenerate(*, session: AnalysisSession, turn: Turn, user: AbstractBaseUser) -> Turn:
    """Ask ``turn``'s question again, as a new turn (raises what turns.do_start_turn raises, and
    NotTheLastAnswer when another turn came first)."""
    with transaction.atomic():
        AnalysisSession.objects.select_for_update().filter(id=session.id).first()
        check_regenerable(session, turn)  # again, under the lock: no turn slips in between
        return turns.do_start_turn(
            session=session, user=user, kind=Turn.Kind.CHAT, text=turn.input, regenerates=turn
        )
