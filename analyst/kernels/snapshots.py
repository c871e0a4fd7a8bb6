"""A session's kernel snapshots: taken after turns, restored when its sandbox is gone or when a
question is asked again (Regenerate) or edited into a branch, pruned to the newest few.

One is taken after each turn that ran code, so the state before any of the last
ANALYST_SNAPSHOTS_KEPT such turns can be had again; older ones are deleted (here and in sandboxd,
which keeps every snapshot until told to delete it).

Only a session's own rows are ever restored, so one user's snapshot never reaches another's
session (a fork gets a row of its own, made by its owner's request for a session they may see).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.conf import settings
from django.db.models import Exists, OuterRef, Q

from analyst.kernels import hosts as sandbox_hosts
from analyst.kernels import live_sandboxes
from analyst.models import AnalysisSession, Event, KernelSnapshot, Turn
from sandboxes import Sandbox, SandboxError, SnapshotNotFound

log = logging.getLogger(__name__)


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
    """Snapshot the session's sandbox and keep only the newest few. Raises SandboxError."""
    info = sandbox.snapshot()
    snapshot = KernelSnapshot.objects.create(
        session=session,
        turn=turn,
        snapshot_id=info.snapshot_id,
        host=session.sandbox_host,
        size=info.size,
        unsaved=sorted(info.unsaved),
    )
    prune(session, keep=settings.ANALYST_SNAPSHOTS_KEPT)
    return snapshot


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
    try:
        Sandbox.delete_snapshot(snapshot.snapshot_id, url=sandbox_hosts.url(snapshot.host))
    except SnapshotNotFound:
        pass
    except SandboxError as exc:
        log.warning("could not delete snapshot %s: %s", snapshot.snapshot_id, exc)
