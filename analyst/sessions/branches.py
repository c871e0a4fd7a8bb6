"""Branching: a past question edited and sent makes a new session, a fork of the log up to just
before that question, whose kernel is as it was then, where the edited question is asked.

The branch, named after the edited question (analyst.turns.titles), holds the question's earlier
events and the model's messages of the turns before it, every upload (as a fork has them), and the
snapshot taken after the last turn before the question that ran code (kernel_snapshots.before),
restored on its first use. The original is untouched; it lists its branches at the question
(``AnalysisSession.branched_from``/``branched_at``). A question whose snapshot is no longer
kept (a session keeps the last ANALYST_SNAPSHOTS_KEPT) branches only when asked to start from an
empty kernel: nothing is replayed. One's own sessions only.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q

from analyst.connections.attachments import copy_attachments
from analyst.kernels import snapshots as kernel_snapshots
from analyst.models import AnalysisSession, Event, Turn
from analyst.realtime import events
from analyst.sessions import forks
from analyst.turns import titles, turns

WITH_STATE = (
    "Branched from “{title}” at an edited question, with the kernel's variables and files as of"
    " then ({when})."
)
FRESH_KERNEL = (
    "Branched from “{title}” at an edited question. No code had run before it, so this branch starts"
    " from a fresh kernel, with the files."
)
EMPTY_KERNEL = (
    "Branched from “{title}” at an edited question, starting from an empty kernel: the state from"
    " before that question was no longer kept, so earlier variables are gone; the files are here."
)
STATE_LOST = (
    "The kernel's state from before this question is no longer kept (a session keeps it for its"
    " {kept} that ran code), so a branch here would start from an empty kernel, with the files."
    ' Branch anyway with "empty_kernel": true.'
)


class StateLost(Exception):
    """The kernel's state before the question is gone; branching needs ``empty_kernel``."""


def check_branch_point(session: AnalysisSession, turn: Turn) -> Event:
    """The user_message of question ``turn``, where a branch starts; ValueError for a turn that
    is not a question, and turns.TurnRefused while a turn of the session is unfinished."""
    question = session.events.filter(turn=turn, type="user_message").order_by("seq").first()
    if turn.kind != Turn.Kind.CHAT or question is None:
        raise ValueError("only a question can be edited into a branch")
    if session.turns.exclude(status__in=Turn.FINISHED).exists():
        raise turns.TurnRefused("a turn is running in this session; wait for it or stop it, then branch")
    return question


def do_branch(
    *,
    source: AnalysisSession,
    turn: Turn,
    question: Event,
    owner: AbstractBaseUser,
    text: str,
    empty_kernel: bool = False,
) -> tuple[AnalysisSession, Turn]:
    """The branch and the turn that asks ``text`` there. Raises StateLost (unless
    ``empty_kernel``), and what turns.do_start_turn raises (then no branch is made)."""
    state = kernel_snapshots.before(source, turn)
    if state.lost and not empty_kernel:
        raise StateLost(STATE_LOST.format(kept=kernel_snapshots.kept_turns()))
    with transaction.atomic():
        branch = AnalysisSession.objects.create(
            owner=owner,
            title=titles.from_question(text) or f"{source.title} (branch)"[:200],
            model=source.model,
            next_seq=question.seq,
            branched_from=source,
            branched_at=question.seq,
            **forks.made_in_place(source),
        )
        copy_attachments(source, branch)
        earlier = Q(turn__isnull=True) | Q(turn_id__lt=turn.id)  # a fork's own copied messages have none
        forks.copy_log(
            source,
            branch,
            source.events.filter(seq__lt=question.seq),
            source.messages.filter(earlier),
            source.artifacts.filter(created_at__lt=question.created_at),
        )
        forks.copy_files(source, branch)
        if state.snapshot is not None:
            forks.copy_snapshot(state.snapshot, branch)
            when = state.snapshot.created_at.strftime("%Y-%m-%d %H:%M")
            said = WITH_STATE.format(title=source.title, when=when)
        elif state.lost:
            said = EMPTY_KERNEL.format(title=source.title)
        else:
            said = FRESH_KERNEL.format(title=source.title)
        payload = {
            "text": said,
            "from": str(source.id),
            "from_title": source.title,
            "branched_at": question.seq,
            "kernel_state": state.snapshot is not None,
            "files": True,
        }
        events.append(branch.id, "forked", payload)
        asked = turns.do_start_turn(session=branch, user=owner, kind=Turn.Kind.CHAT, text=text)
    return branch, asked


def branches_of(session: AnalysisSession) -> list[dict[str, object]]:
    """The session's branches, oldest first: where each starts (the question's seq) and its title."""
    made = session.branches.order_by("created_at").values("id", "title", "branched_at")
    return [{"id": str(b["id"]), "title": b["title"], "at": b["branched_at"]} for b in made]
