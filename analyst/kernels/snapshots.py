"""A session's kernel snapshots: taken after turns, restored when its sandbox is gone or when a
question is asked again (Regenerate) or edited into a branch, pruned to the newest few.

One is taken after each turn that ran code, so the state before any of the last
ANALYST_SNAPSHOTS_KEPT such turns can be had again; older ones are deleted (here and in sandboxd,
which keeps every snapshot until told to delete it).

A new snapshot counts against its owner's storage limit (accounts.storage: once, however many
forks name it), less the old ones it replaces. One that would pass the limit is deleted at once:
the session keeps its previous snapshot, and StateNotSaved says so for the user.

Only a session's own rows are ever restored, so one user's snapshot never reaches another's
session (a fork gets a row of its own, made by its owner's request for a session they may see).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from analyst.accounts import limits as user_limits
from analyst.accounts import workspace_storage
from analyst.accounts.storage import stored_bytes
from analyst.kernels import hosts as sandbox_hosts
from analyst.kernels import live_sandboxes
from analyst.lib.sizes import human_size
from analyst.models import AnalysisSession, Event, KernelSnapshot, Turn
from sandboxes import Sandbox, SandboxError, SnapshotInfo, SnapshotNotFound

log = logging.getLogger(__name__)


class StateNotSaved(Exception):
    """The kernel's new snapshot would take its owner past their storage limit, so it was deleted;
    the message says so, and what a restore brings back instead."""


def latest(session: AnalysisSession) -> KernelSnapshot | None:
    return session.snapshots.order_by("-id").first()


@dataclass(frozen=True)
class StateBefore:
    """The kernel's state just before a turn: ``snapshot`` when it is kept; None with ``lost``
    False when no code had run before (an empty kernel, with the files, is that state), with
    ``lost`` True when it existed but is gone (pruned, too large to save, or its turn stopped)."""

    snapshot: KernelSnapshot | None
    lost: bool = False


def before(session: AnalysisSession, turn: Turn) -> StateBefore:
    """The state the kernel was in when ``turn`` started: the snapshot taken after the last
    earlier turn that ran code (or restarted the kernel); answers later asked again are left out,
    since their cells were undone. Before any such turn: what the session started with, which
    for a fork or a branch is the state it was made with."""
    ran_code = Exists(Event.objects.filter(turn=OuterRef("pk"), type__in=["cell", "tool_call"]))
    last = (
        session.turns.filter(id__lt=turn.id, regenerations__isnull=True)
        .filter(Q(kind=Turn.Kind.RESTART) | Q(ran_code))
        .order_by("-id")
        .first()
    )
    if last is not None:
        snapshot = session.snapshots.filter(turn=last).order_by("-id").first()
        return StateBefore(snapshot, lost=snapshot is None)
    inherited = session.snapshots.filter(turn__isnull=True).order_by("-id").first()
    if inherited is not None:
        return StateBefore(inherited)
    forked_with_state = session.events.filter(type="forked", payload__kernel_state=True).exists()
    return StateBefore(None, lost=forked_with_state)


def kept_turns() -> str:
    """How far back states are kept, in words: "last 10 turns" (or "last turn")."""
    kept = settings.ANALYST_SNAPSHOTS_KEPT
    return "last turn" if kept == 1 else f"last {kept} turns"


def take(session: AnalysisSession, sandbox: Sandbox, turn: Turn | None) -> KernelSnapshot:
    """Snapshot the session's sandbox and keep only the newest few. Raises SandboxError, and
    StateNotSaved (the earlier snapshots kept) past the owner's storage limit."""
    info = sandbox.snapshot()
    with transaction.atomic():
        # The session's row, then the user's: turns.do_start_turn's order (the new row's key
        # needs the session's row, which a question sent meanwhile holds while it waits for the user's).
        AnalysisSession.objects.select_for_update().filter(id=session.id).first()
        user_limits.hold_user(session.owner)  # two sessions' snapshots at once are counted in turn
        refusal = over_limit(session, info)
        if refusal is None:
            snapshot = KernelSnapshot.objects.create(
                session=session,
                turn=turn,
                snapshot_id=info.snapshot_id,
                host=session.sandbox_host,
                size=info.size,
                unsaved=sorted(info.unsaved),
            )
    if refusal is not None:
        _delete_in_sandboxd(info.snapshot_id, session.sandbox_host)
        raise StateNotSaved(refusal)
    prune(session, keep=settings.ANALYST_SNAPSHOTS_KEPT)
    return snapshot


def over_limit(session: AnalysisSession, info: SnapshotInfo) -> str | None:
    """Why ``info``, a new snapshot of ``session``, may not be kept (its owner's storage limit, or
    its team workspace's), or None. The snapshots it would prune count as gone; a snapshot that
    grows nothing passes."""
    keep = max(settings.ANALYST_SNAPSHOTS_KEPT - 1, 0)  # the new one is kept among them
    pruned = list(session.snapshots.order_by("-id").values_list("id", flat=True)[keep:])
    past = _past_owners_limit(session, info.size, pruned) or workspace_storage.past_limit(
        session, adding=info.size, leaving=pruned
    )
    if past is None:
        return None
    previous = latest(session)
    if previous is None:
        kept = "No earlier state of this kernel is saved: if it expires, its variables are gone."
    else:
        when = timezone.localtime(previous.created_at).strftime("%Y-%m-%d %H:%M")
        kept = f"The state saved at {when} is kept: if this kernel expires, it comes back as it was then."
    return (
        f"The kernel's variables and files ({human_size(info.size)}) were not saved: they would take"
        f" {past}. {kept} Delete files or sessions, or free large variables, to make room."
    )


def _past_owners_limit(session: AnalysisSession, size: int, pruned: list[int]) -> str | None:
    owner = session.owner
    limit = user_limits.limits_for(owner).stored_bytes
    if not limit:
        return None
    stored = stored_bytes(owner)
    after = stored_bytes(owner, leaving=pruned) + size
    if after <= limit or after <= stored:
        return None
    return (
        f"your files, charts and saved kernels past your {human_size(limit)} (they take {human_size(stored)})"
    )


def restore(session: AnalysisSession, snapshot: KernelSnapshot, *, host: str) -> Sandbox:
    """A new sandbox for ``session`` in ``snapshot``'s state, on ``host`` ("" is SANDBOXD_URL).
    Raises SandboxError (SnapshotNotFound where the host cannot read the snapshot)."""
    if snapshot.session_id != session.id:
        raise ValueError("a session restores only its own snapshots")
    return Sandbox.restore(
        snapshot.snapshot_id,
        ttl_seconds=settings.ANALYST_SANDBOX_TTL,
        metadata=live_sandboxes.metadata_for(session),
        url=sandbox_hosts.url(host),
    )


def prune(session: AnalysisSession, *, keep: int) -> None:
    for snapshot in session.snapshots.order_by("-id")[keep:]:
        forget(snapshot)


def forget(snapshot: KernelSnapshot) -> None:
    """Delete the row, and sandboxd's copy once no other session (a fork) still names it."""
    snapshot.delete()
    if KernelSnapshot.objects.filter(snapshot_id=snapshot.snapshot_id).exists():
        return
    _delete_in_sandboxd(snapshot.snapshot_id, snapshot.host)


def _delete_in_sandboxd(snapshot_id: str, host: str) -> None:
    try:
        Sandbox.delete_snapshot(snapshot_id, url=sandbox_hosts.url(host))
    except SnapshotNotFound:
        pass
    except SandboxError as exc:
        log.warning("could not delete snapshot %s: %s", snapshot_id, exc)
