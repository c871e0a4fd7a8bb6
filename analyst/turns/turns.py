"""Turns: ask, run a cell, cancel; and the worker side: claim, execute, fail the orphaned."""

from __future__ import annotations

import json
import logging
from datetime import datetime

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from analyst.accounts import limits as user_limits
from analyst.accounts import usage
from analyst.audit import turns as audit_turns
from analyst.connections.session_secrets import redactor_for
from analyst.files.artifacts import StorageFull
from analyst.kernels.session_kernel import interrupt_cell
from analyst.models import AnalysisSession, Turn
from analyst.ops import metrics
from analyst.realtime import events
from analyst.turns import queue as turn_queue
from analyst.turns import titles
from analyst.turns.agent.loop import TurnCancelled, TurnRunner
from analyst.turns.agent.providers import ProviderError
from analyst.workspaces import roles
from analyst.workspaces.roles import Action
from sandboxes import SandboxError

log = logging.getLogger(__name__)


OUTCOMES = {"turn_done": "done", "turn_failed": "failed", "turn_cancelled": "cancelled"}
# The kinds of turn that wait in line behind another member's (check_can_start).
WAIT_IN_LINE = (Turn.Kind.CHAT, Turn.Kind.CELL)
# What a member's role must allow for each kind of turn to run (re-checked as it starts).
NEEDS = {Turn.Kind.CHAT: Action.ASK, Turn.Kind.RESTART: Action.RESTART}


class TurnRefused(Exception):
    """The request cannot start a turn now (say, one is already running)."""


class InputTooLong(ValueError):
    """A question or a cell longer than ANALYST_MAX_INPUT characters."""


def check_can_start(
    session: AnalysisSession, *, kind: str = "", asker: AbstractBaseUser | None = None
) -> None:
    """A new turn may start, or wait behind a turn that is only saving the kernel (it then
    starts as soon as that save ends); never behind one that still thinks or runs a cell. A
    restart may also wait behind a turn being stopped (do_restart stops it).

    A question or a cell of ``asker`` also waits in line behind other members' turns (they run
    one at a time, in the order asked), as long as no turn of the asker's own is unfinished."""
    unfinished = session.turns.exclude(status__in=Turn.FINISHED)
    if kind == Turn.Kind.RESTART:
        unfinished = unfinished.exclude(cancel_requested=True)
    busy = unfinished.exclude(status=Turn.Status.RUNNING, saving=True)
    if asker is not None and kind in WAIT_IN_LINE:
        busy = busy.filter(requested_by=asker)  # others' turns: this one waits in line behind them
    if kind == Turn.Kind.RESTART:  # turns run in the order asked: it would come after one waiting
        waiting = busy.filter(status=Turn.Status.QUEUED).select_related("requested_by").order_by("id").first()
        if waiting is not None:
            raise TurnRefused(_restart_after(waiting, asker))
    if busy.exists():
        raise TurnRefused("a turn is already running in this session; wait for it or stop it")


def _restart_after(waiting: Turn, asker: AbstractBaseUser | None) -> str:
    what = {Turn.Kind.CHAT: "question", Turn.Kind.CELL: "cell"}.get(waiting.kind, "run")
    mine = asker is not None and waiting.requested_by_id == asker.pk
    whose = "your" if mine or waiting.requested_by is None else f"{waiting.requested_by.get_username()}'s"
    return (
        f"{whose} {what} waits to run in this session, and a restart would only come after it:"
        " restart once it has run"
    )


def do_start_turn(
    *,
    session: AnalysisSession,
    user: AbstractBaseUser,
    kind: str,
    text: str,
    via: dict[str, str] | None = None,
    edited_from: int | None = None,
    regenerates: Turn | None = None,
) -> Turn:
    """Store the request and its first event, and enqueue the turn once that is committed.

    A REPLAY's ``text`` is its plan (analyst.sessions.replays.plan).

    ``via`` says where a request came from other than the page (``{"via": "mcp", "client": name}``);
    its first event carries it. ``edited_from`` (a cell) is the seq of the cell it is an edited
    copy of (check_edit_source); the original stays where it is in the history. ``regenerates``
    (a question) is the turn it asks again (analyst.sessions.regenerations); its user_message names it.
    The returned turn's ``enqueued`` says whether the broker took it; when it did not, the turn
    is stored all the same and the reconciler sends it once the broker is back.
    """
    limit = settings.ANALYST_MAX_INPUT
    if len(text) > limit and kind != Turn.Kind.REPLAY:  # a replay's cells each ran once already
        what = "question" if kind == Turn.Kind.CHAT else "cell"
        raise InputTooLong(f"the {what} is {len(text):,} characters long; at most {limit:,} are accepted")
    shown = redactor_for(session).text(text)  # what the log keeps: a secret typed in, as «secret:NAME»
    with transaction.atomic():
        AnalysisSession.objects.select_for_update().filter(id=session.id).first()
        check_can_start(session, kind=kind, asker=user if regenerates is None else None)
        user_limits.hold_user(user)  # always after the session's row: one order, no deadlock
        user_limits.check_turn(user, kind=kind)
        if kind == Turn.Kind.CHAT:
            usage.check_budget(user)  # a code cell costs no tokens: it always runs
        turn = Turn.objects.create(
            session=session, requested_by=user, kind=kind, input=text, regenerates=regenerates
        )
        turn.enqueued = None
        # Before the broadcast: sooner to work. A turn queued behind a saving one is only claimed
        # once that one ends, and that end enqueues it again (see claim and dispatch_next).
        transaction.on_commit(lambda: setattr(turn, "enqueued", turn_queue.enqueue(turn.id)))
        if kind == Turn.Kind.CHAT:
            again = {} if regenerates is None else {"regenerates": regenerates.id}
            titled = titles.do_name_after_question(session, shown)  # the page shows the new name
            named = {"session_title": titled} if titled else {}
            asked = {"text": shown, "by": user.get_username(), **(via or {}), **again, **named}
            events.append(session.id, "user_message", asked, turn=turn)
        elif kind == Turn.Kind.RESTART:
            events.append(
                session.id, "notice", {"text": "Restarting the kernel…", "code": "restarting"}, turn=turn
            )
        elif kind == Turn.Kind.REPLAY:  # its plan (analyst.sessions.replays.plan) says what to announce
            announce = json.loads(text)["announce"]
            events.append(session.id, "notice", {"text": announce, "code": "replay_queued"}, turn=turn)
        else:
            edit = {} if edited_from is None else {"edited_from": edited_from}
            ran = {"code": shown, "by": user.get_username(), **(via or {}), **edit}
            events.append(session.id, "cell", ran, turn=turn)
        audit_turns.record_start(session=session, user=user, turn=turn)
    return turn


def do_restart(*, session: AnalysisSession, user: AbstractBaseUser) -> Turn:
    """Restart the kernel, as a turn of its own. A turn running meanwhile is stopped first: its
    cell is interrupted, and its kernel restarted by sandboxd if it has not ended within the
    interrupt grace, so Restart never waits for a cell that ignores interrupts; the restart then
    waits for that turn's end. One only saving the kernel is waited for, and a restart already
    on its way is not stopped for another (TurnRefused).

    The restart is stored before the running turn is stopped: that turn's worker then knows a
    restart follows, and does not bring the stopped kernel's state back only to have it emptied."""
    with transaction.atomic():  # refused (TurnRefused), it leaves the running turn as it was
        AnalysisSession.objects.select_for_update().filter(id=session.id).first()
        unfinished = session.turns.exclude(status__in=Turn.FINISHED)
        busy = unfinished.exclude(status=Turn.Status.RUNNING, saving=True)
        running = None if busy.filter(kind=Turn.Kind.RESTART).exists() else busy.order_by("id").first()
        if running is not None:
            Turn.objects.filter(id=running.id).update(cancel_requested=True)
        restart = do_start_turn(session=session, user=user, kind=Turn.Kind.RESTART, text="restart")
    if running is not None:
        stop(running)
    return restart


def check_edit_source(session: AnalysisSession, seq: object) -> int:
    """The seq of the cell an edited cell copies: a cell of this session, the user's or the
    model's; ValueError otherwise."""
    if not isinstance(seq, int) or isinstance(seq, bool):
        raise ValueError("'edited_from' must be the seq of a cell of this session")
    if not session.events.filter(seq=seq, type__in=["cell", "tool_call"]).exists():
        raise ValueError(f"'edited_from': there is no cell with seq {seq} in this session")
    return seq


def do_cancel(*, session: AnalysisSession) -> Turn | None:
    """Ask the running turn to stop and interrupt its cell; the worker records the end. With
    members' turns waiting in line, that is the one running, not theirs; behind a turn that only
    saves the kernel, the one waiting for it."""
    unfinished = session.turns.exclude(status__in=Turn.FINISHED)
    working = unfinished.exclude(status=Turn.Status.RUNNING, saving=True).order_by("id").first()
    turn = working or unfinished.order_by("-id").first()
    if turn is not None:
        stop(turn)
    return turn


def stop(turn: Turn) -> None:
    """Ask ``turn`` to stop: a queued one ends now, one whose worker died is ended here, a
    running one has its cell interrupted and its worker records the end."""
    Turn.objects.filter(id=turn.id).update(cancel_requested=True)
    if turn.status == Turn.Status.QUEUED and end_unrun(turn, Turn.Status.CANCELLED, "turn_cancelled"):
        return
    # A turn whose worker died: nobody runs it any more, and waiting for the sweep would keep
    # the session blocked.
    if lease_lapsed(turn) and end_unrun(
        turn,
        Turn.Status.CANCELLED,
        "turn_cancelled",
        "its worker had stopped",
        claimed_from=Turn.Status.RUNNING,
    ):
        return
    # Read again: the worker may have made the session's sandbox since this request read it (a
    # new session's first cell); one made later runs no cell for a turn asked to stop (loop.py).
    turn.session.refresh_from_db(fields=["sandbox_id", "sandbox_host"])
    if turn.session.sandbox_id:
        interrupt_cell(turn.session)


def do_interrupt(*, session: AnalysisSession) -> bool:
    """Interrupt the cell that runs now and keep its turn (Stop ends the turn): the cell ends
    with KeyboardInterrupt, which a model reads as the cell's error and goes on from. False when
    no turn is running or the kernel did not take it."""
    if not session.sandbox_id or not session.turns.filter(status=Turn.Status.RUNNING).exists():
        return False
    return interrupt_cell(session)


def claim(turn_id: int) -> Turn | None:
    """Take a queued turn for this worker; None when another delivery already has it, or while
    an earlier turn of its session is unfinished (that turn's end enqueues this one again)."""
    now = timezone.now()
    lease = now + timezone.timedelta(seconds=settings.ANALYST_TURN_LEASE)
    claimed = (
        Turn.objects.filter(id=turn_id, status=Turn.Status.QUEUED)
        .exclude(behind_an_unfinished_turn())
        .update(status=Turn.Status.RUNNING, started_at=now, lease_expires_at=lease)
    )
    return Turn.objects.select_related("session", "requested_by").get(id=turn_id) if claimed else None


def behind_an_unfinished_turn() -> Exists:
    """For a Turn query: an earlier turn of its session is unfinished (this one waits for it)."""
    earlier = Turn.objects.filter(session=OuterRef("session"), id__lt=OuterRef("id"))
    return Exists(earlier.exclude(status__in=Turn.FINISHED))


def execute(turn_id: int) -> None:
    """The worker's side of a turn: claim it, re-check who may run it, run it, record the end."""
    turn = claim(turn_id)
    if turn is None:
        return  # a duplicate delivery, a turn already ended or one still waiting: nothing twice
    try:
        run_claimed(turn)
    finally:
        dispatch_next(turn.session_id)  # after this turn's end and its event, never before


def run_claimed(turn: Turn) -> None:
    if not may_still_run(turn):
        why = "its requester may no longer work in this session"
        if turn.events.exists():  # a member's question in the log, which says why it never ran
            end(turn, Turn.Status.FAILED, "turn_failed", {"reason": why})
        else:  # never asked here (not a member's): nothing of it reaches the session's log
            finish(turn, Turn.Status.FAILED, error=why)
        return
    events.append(turn.session_id, "turn_started", {"kind": turn.kind}, turn=turn)
    try:
        TurnRunner(turn).run()
    except TurnCancelled:
        end(turn, Turn.Status.CANCELLED, "turn_cancelled", {})
    except ProviderError as exc:
        metrics.count("provider_errors", code=exc.code)
        events.append(turn.session_id, "error", {"code": exc.code, "message": str(exc)}, turn=turn)
        end(turn, Turn.Status.FAILED, "turn_failed", {"reason": str(exc)})
    except SoftTimeLimitExceeded:
        if turn.session.sandbox_id:
            interrupt_cell(turn.session)
        end(turn, Turn.Status.FAILED, "turn_failed", {"reason": "the turn took longer than its time limit"})
    except StorageFull as exc:  # a chart that did not fit: its cell was ended with it
        events.append(turn.session_id, "error", {"code": exc.code, "message": str(exc)}, turn=turn)
        end(turn, Turn.Status.FAILED, "turn_failed", {"reason": "the server's storage is full"})
    except SandboxError as exc:
        events.append(turn.session_id, "error", {"code": exc.code, "message": str(exc)}, turn=turn)
        end(turn, Turn.Status.FAILED, "turn_failed", {"reason": f"the sandbox service failed: {exc}"})
    except Exception:  # a bug of ours: end the turn visibly rather than leave it running
        log.exception("turn %s failed", turn.id)
        end(turn, Turn.Status.FAILED, "turn_failed", {"reason": "an internal error ended this turn"})
        raise
    else:
        end(turn, Turn.Status.DONE, "turn_done", {})


def may_still_run(turn: Turn) -> bool:
    """Whether the turn's requester may still do it in its session's workspace (their role may
    have changed, or they left, while it waited)."""
    role = roles.role_of(turn.requested_by, roles.workspace_of(turn.session))
    return roles.may(role, NEEDS.get(turn.kind, Action.RUN_CELL))


def end(turn: Turn, status: str, event: str, payload: dict[str, object]) -> None:
    if finish(turn, status, error=str(payload.get("reason", ""))):
        announce_end(turn, event, payload)


def end_unrun(
    turn: Turn, status: str, event: str, reason: str = "", *, claimed_from: str = Turn.Status.QUEUED
) -> bool:
    """End a turn no worker runs (never started, or its worker died) from ``claimed_from``, and
    send the session's next; False when it was not in that status any more. A turn whose worker
    died may have left its cell running: the kernel is interrupted before the next turn comes."""
    if not finish(turn, status, error=reason, claimed_from=claimed_from):
        return False
    if claimed_from == Turn.Status.RUNNING and turn.session.sandbox_id:
        interrupt_cell(turn.session)
    announce_end(turn, event, {"reason": reason} if reason else {})
    dispatch_next(turn.session_id)
    return True


def announce_end(turn: Turn, event: str, payload: dict[str, object]) -> None:
    """The turn's one terminal event, with what it spent; a turn that had started is timed."""
    spent = usage.turn_usage(turn).as_dict()
    events.append(turn.session_id, event, {**payload, "usage": spent}, turn=turn)
    if turn.started_at is not None:
        took = (timezone.now() - turn.started_at).total_seconds()
        metrics.observe("turn_seconds", took, outcome=OUTCOMES[event])


def lease_lapsed(turn: Turn, now: datetime | None = None) -> bool:
    expires = turn.lease_expires_at
    return turn.status == Turn.Status.RUNNING and expires is not None and expires < (now or timezone.now())


def finish(turn: Turn, status: str, *, error: str = "", claimed_from: str = Turn.Status.RUNNING) -> bool:
    updated = Turn.objects.filter(id=turn.id, status=claimed_from).update(
        status=status, finished_at=timezone.now(), error=error, saving=False
    )
    return bool(updated)


def dispatch_next(session_id: object) -> None:
    """Enqueue the session's oldest queued turn: one may be waiting for the turn that just ended
    (should the broker not take it, the reconciler sends it later)."""
    waiting = Turn.objects.filter(session_id=session_id, status=Turn.Status.QUEUED).order_by("id").first()
    if waiting is not None:
        turn_queue.enqueue(waiting.id)


def fail_orphans(now: datetime | None = None) -> int:
    """Turns whose worker died (their lease lapsed) end as failed, each with an event saying so."""
    reason = "the worker running this turn stopped; ask again"
    lapsed = Turn.objects.filter(status=Turn.Status.RUNNING, lease_expires_at__lt=now or timezone.now())
    return sum(
        end_unrun(turn, Turn.Status.FAILED, "turn_failed", reason, claimed_from=Turn.Status.RUNNING)
        for turn in lapsed
    )
