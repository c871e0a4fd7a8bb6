"""A session's kernel snapshots: taken after turns, restored when its sandbox is gone, pruned.

Only a session's own rows are ever restored, so one user's snapshot never reaches another's
session (a fork gets a row of its own, made by its owner's request for a session they may see).
"""

from __future__ import annotations

import logging

from django.conf import settings

from analyst.models import AnalysisSession, KernelSnapshot, Turn
from sandboxes import Sandbox, SandboxError, SnapshotNotFound

log = logging.getLogger(__name__)


def latest(session: AnalysisSession) -> KernelSnapshot | None:
    return session.snapshots.order_by("-id").first()


def take(session: AnalysisSession, sandbox: Sandbox, turn: Turn | None) -> KernelSnapshot:
    """Snapshot the session's sandbox and keep only the newest few. Raises SandboxError."""
    info = sandbox.snapshot()
    snapshot = KernelSnapshot.objects.create(
        session=session, turn=turn, snapshot_id=info.snapshot_id, size=info.size, unsaved=sorted(info.unsaved)
    )
    prune(session, keep=settings.ANALYST_SNAPSHOTS_KEPT)
    return snapshot


def restore(session: AnalysisSession, snapshot: KernelSnapshot) -> Sandbox:
    """A new sandbox for ``session`` in ``snapshot``'s state. Raises SandboxError."""
    if snapshot.session_id != session.id:
        raise ValueError("a session restores only its own snapshots")
    return Sandbox.restore(
        snapshot.snapshot_id,
        ttl_seconds=settings.ANALYST_SANDBOX_TTL,
        metadata={"session": str(session.id)},
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
        Sandbox.delete_snapshot(snapshot.snapshot_id)
    except SnapshotNotFound:
        pass
    except SandboxError as exc:
        log.warning("could not delete snapshot %s: %s", snapshot.snapshot_id, exc)
