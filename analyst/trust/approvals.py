"""Cells a person approves: which of the model's cells wait for the session's owner, the wait in
the worker, and the owner's decision from the web (Run, Run edited, Reject).

A waiting cell is a ``cell_pending`` event (its tool_call_id and code); its decision is a
``cell_decided`` event naming it by seq, which the waiting worker polls the log for. Both are
events, so every open page draws the cell and its outcome live, and a reload rebuilds them.

The wait is part of its turn, so ANALYST_TURN_TIMEOUT (the turn task's time limit) bounds it
too: a wait ends at ANALYST_APPROVAL_TIMEOUT or shortly before the turn's limit, whichever comes
first, and the turn then ends saying so (never killed mid-wait by the limit).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from analyst.models import AnalysisSession, Connection, Event, Turn
from analyst.models.sessions import Approval
from analyst.realtime import events
from analyst.trust.file_writes import writes

POLL_SECONDS = 0.5
# What a wait leaves of the turn's time limit, for the turn to end in words before the limit hits.
TURN_LIMIT_MARGIN = 10
REASON_LIMIT = 2000  # characters of a rejection's reason
RUN, REJECTED, EXPIRED = "run", "rejected", "expired"


class NotPending(Exception):
    """No cell with that tool_call_id ever waited in the session (404)."""


class AlreadyDecided(Exception):
    """That cell was decided already, or its turn ended or is being stopped (409)."""


class ApprovalExpired(Exception):
    """Nobody decided in time: the turn ends with this message."""


@dataclass(frozen=True)
class Decision:
    run: bool
    code: str  # what runs: the model's code, or the owner's edit of it
    edited: bool = False
    reason: str = ""

    @property
    def note(self) -> str:
        """What the model is told beside the cell's output, or instead of it; "" for nothing."""
        if not self.run:
            told = (
                f"The user rejected this cell: {self.reason}"
                if self.reason
                else "The user rejected this cell."
            )
            return f"{told} It did not run."
        if self.edited:
            return (
                "The user edited this cell before it ran; this code ran instead of yours:\n"
                f"```python\n{self.code}\n```"
            )
        return ""


def check_mode(value: object) -> str:
    """``approve_cells`` as the API takes it: true (every cell), false, or a mode's name."""
    if value is True:
        return Approval.ALL
    if value is False:
        return Approval.OFF
    if isinstance(value, str) and value in Approval.values:
        return value
    raise ValueError('\'approve_cells\' must be true, false, "all", "writes" or "off"')


def do_set_mode(session: AnalysisSession, value: object) -> None:
    """Set which cells wait; a turn running now follows it from its next cell."""
    session.approve_cells = check_mode(value)
    session.save(update_fields=["approve_cells", "updated_at"])


def reasons_to_wait(session_id: object, code: str) -> list[str] | None:
    """Why the model's ``code`` waits for the owner (read from the session now, so a change made
    during a turn holds from its next cell): [] in "all" mode, the lines that write files or use a
    connection that is not read-only in "writes" mode; None when it runs at once."""
    mode = AnalysisSession.objects.filter(id=session_id).values_list("approve_cells", flat=True).first()
    if mode == Approval.ALL:
        return []
    if mode == Approval.WRITES:
        writable = Connection.objects.filter(attachments__session_id=session_id, read_only=False)
        return writes(code, frozenset(writable.values_list("name", flat=True))) or None
    return None


def await_decision(
    *,
    turn: Turn,
    tool_call_id: str,
    code: str,
    check: Callable[[], None],
    shown_code: str | None = None,
    poll: float = POLL_SECONDS,
) -> Decision:
    """In the worker, before the model's cell runs: at once when the session lets it run, else
    after the owner's decision, stored meanwhile as a ``cell_pending`` event showing
    ``shown_code`` (the code with the session's secrets hidden; ``code`` by default). ``check``
    raises to stop the wait (the turn was stopped); ApprovalExpired when nobody decided in time."""
    why = reasons_to_wait(turn.session_id, code)
    if why is None:
        return Decision(run=True, code=code)
    wait, limited_by_turn = _wait_seconds(turn)
    expires = timezone.now() + timezone.timedelta(seconds=wait)
    shown = code if shown_code is None else shown_code
    payload = {"tool_call_id": tool_call_id, "code": shown, "why": why, "expires_at": expires.isoformat()}
    pending = events.append(turn.session_id, "cell_pending", payload, turn=turn)
    deadline = time.monotonic() + wait
    while True:
        check()
        decided = _decision_of(pending)
        if decided is not None:
            return _as_decision(decided.payload, code, shown)
        if time.monotonic() >= deadline:
            with contextlib.suppress(AlreadyDecided):
                _decide(pending, {"decision": EXPIRED})
            decided = _decision_of(pending)
            if decided is not None and decided.payload.get("decision") != EXPIRED:
                return _as_decision(decided.payload, code, shown)  # the owner decided just now: that stands
            raise ApprovalExpired(_expired_message(wait, limited_by_turn))
        time.sleep(poll)


def _wait_seconds(turn: Turn) -> tuple[float, bool]:
    """How long this wait may last, and whether the turn's own time limit is what bounds it."""
    wait = float(settings.ANALYST_APPROVAL_TIMEOUT)
    started = turn.started_at or timezone.now()
    left = settings.ANALYST_TURN_TIMEOUT - (timezone.now() - started).total_seconds() - TURN_LIMIT_MARGIN
    if left < wait:
        return max(left, 0.0), True
    return wait, False


def _expired_message(wait: float, limited_by_turn: bool) -> str:
    if limited_by_turn:
        why = "before the turn reached its time limit (ANALYST_TURN_TIMEOUT)"
    else:
        why = f"within {_duration(wait)} (ANALYST_APPROVAL_TIMEOUT)"
    return f"Nobody ran or rejected the assistant's cell {why}, so it did not run and the turn ended."


def _duration(seconds: float) -> str:
    if seconds >= 120:
        return f"{round(seconds / 60)} minutes"
    return f"{round(seconds)} second{'' if round(seconds) == 1 else 's'}"


def check_decision(body: dict[str, object], *, approve: bool) -> dict[str, object]:
    """The decision a request asks for, as its event stores it; ValueError for a bad body."""
    if not approve:
        reason = body.get("reason") or ""
        if not isinstance(reason, str):
            raise ValueError("'reason' must be a string")
        if len(reason) > REASON_LIMIT:
            raise ValueError(
                f"'reason' is {len(reason):,} characters long; at most {REASON_LIMIT:,} are accepted"
            )
        return {"decision": REJECTED, "reason": reason.strip()}
    code = body.get("code")
    if code is None:
        return {"decision": RUN}
    if not isinstance(code, str) or not code.strip():
        raise ValueError("'code' must be a non-empty string (the edited cell)")
    limit = settings.ANALYST_MAX_INPUT
    if len(code) > limit:
        raise ValueError(f"the cell is {len(code):,} characters long; at most {limit:,} are accepted")
    return {"decision": RUN, "code": code}


def do_decide(*, session: AnalysisSession, tool_call_id: str, decision: dict[str, object]) -> Event:
    """The owner's decision on the session's newest cell waiting under ``tool_call_id``, stored
    as a ``cell_decided`` event. NotPending when none ever waited, AlreadyDecided when it was
    decided or its turn is over (or being stopped)."""
    pending = (
        session.events.filter(type="cell_pending", payload__tool_call_id=tool_call_id)
        .order_by("-seq")
        .first()
    )
    if pending is None:
        raise NotPending(f"no cell {tool_call_id!r} is waiting for approval in this session")
    code = decision.get("code")
    if code is not None and code == pending.payload.get("code"):
        decision = {"decision": RUN}  # an edit that changed nothing is a plain Run
    elif code is not None:
        decision = {**decision, "edited": True}
    return _decide(pending, decision)


def _decide(pending: Event, decision: dict[str, object]) -> Event:
    """Store ``decision`` on ``pending`` unless another got there first (one decision each)."""
    with transaction.atomic():
        # The session's row, locked: two decisions on one cell are taken one after the other.
        AnalysisSession.objects.select_for_update().filter(id=pending.session_id).first()
        earlier = _decision_of(pending)
        if earlier is not None:
            raise AlreadyDecided(f"this cell was already decided: {_outcome(earlier.payload)}")
        turn = Turn.objects.filter(id=pending.turn_id).values_list("status", "cancel_requested").first()
        if turn is None or turn[0] != Turn.Status.RUNNING:
            raise AlreadyDecided("this cell no longer waits: its turn has ended")
        if turn[1] and decision["decision"] != EXPIRED:
            raise AlreadyDecided("this cell no longer waits: its turn is being stopped")
        payload = {"tool_call_id": pending.payload["tool_call_id"], "pending": pending.seq, **decision}
        return events.append(pending.session_id, "cell_decided", payload, turn=pending.turn)


def _decision_of(pending: Event) -> Event | None:
    return Event.objects.filter(
        session_id=pending.session_id,
        turn_id=pending.turn_id,
        type="cell_decided",
        seq__gt=pending.seq,
        payload__pending=pending.seq,
    ).first()


def _as_decision(payload: dict[str, object], code: str, shown: str) -> Decision:
    """``shown``: the code as the owner saw it; sent back unchanged, the code itself runs."""
    if payload.get("decision") != RUN:
        return Decision(run=False, code=code, reason=str(payload.get("reason") or ""))
    edited = payload.get("code")
    if isinstance(edited, str) and edited not in (code, shown):
        return Decision(run=True, code=edited, edited=True)
    return Decision(run=True, code=code)


def _outcome(payload: dict[str, object]) -> str:
    return {RUN: "it ran", REJECTED: "it was rejected", EXPIRED: "it expired"}.get(
        str(payload.get("decision")), "it was decided"
    )
