"""A team workspace's storage limit: what its sessions store (uploads, charts, saved kernels; each
stored file once), whoever owns them, bounded by the workspace's own figure or
ANALYST_WORKSPACE_STORAGE, on top of each user's limit (accounts.limits). A personal workspace
has none: its owner's limit is its limit."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from django.conf import settings
from django.db import transaction

from analyst.accounts.limits import LimitReached
from analyst.accounts.storage import workspace_stored_bytes
from analyst.lib.sizes import human_size
from analyst.models import AnalysisSession, Workspace

MAX_LIMIT = 1 << 60  # bytes: more than any disk, less than the database's bigint


class BadLimit(ValueError):
    """A storage limit that cannot be: the message says why."""


def limit_of(workspace: Workspace) -> int:
    """The workspace's limit in bytes (0: none): its own figure, or the setting."""
    return settings.ANALYST_WORKSPACE_STORAGE if workspace.storage_limit is None else workspace.storage_limit


def team_workspace_of(session: AnalysisSession) -> Workspace | None:
    """The team workspace the session lives in; None for one of a personal workspace."""
    if session.workspace_id is None or session.workspace.personal_of_id is not None:
        return None
    return session.workspace


def past_limit(
    session: AnalysisSession, *, adding: int, leaving: Collection[int] = (), stored: int | None = None
) -> str | None:
    """How storing ``adding`` more bytes in ``session`` would take its team workspace past its
    limit, in words ("the files … of Team past its 10 GiB (they take …)"), or None when it would
    not. ``leaving`` names snapshot rows to count as gone; what grows nothing passes. Inside a
    transaction, the workspace's row is held until it ends: stores in one workspace at once are
    counted one after the other."""
    workspace = team_workspace_of(session)
    limit = 0 if workspace is None else limit_of(workspace)
    if workspace is None or not limit:
        return None
    if transaction.get_connection().in_atomic_block:
        Workspace.objects.select_for_update().filter(id=workspace.id).first()
    before = workspace_stored_bytes(workspace.id) if stored is None else stored
    after = (workspace_stored_bytes(workspace.id, leaving=leaving) if leaving else before) + adding
    if after <= limit or after <= before:
        return None
    return (
        f"the files, charts and saved kernels of {workspace.name} past its {human_size(limit)}"
        f" (they take {human_size(before)})"
    )


def check_storage(session: AnalysisSession, *, adding: int, what: str, stored: int | None = None) -> None:
    """Raises LimitReached when storing ``adding`` more bytes (``what``, for the message) would
    take the session's team workspace past its limit (``stored``: what it takes now, if known)."""
    past = past_limit(session, adding=adding, stored=stored)
    if past is not None:
        raise LimitReached(
            "workspace_storage_limit",
            f"{what} ({human_size(adding)}) would take {past}; delete files or sessions there, or ask"
            f" an admin of {session.workspace.name} for more room.",
        )


def stored_now(session: AnalysisSession) -> int | None:
    """What the session's team workspace stores, its row held until the transaction ends (copies
    into it are then counted one after the other); None when it has no limit to keep."""
    workspace = team_workspace_of(session)
    if workspace is None or not limit_of(workspace):
        return None
    Workspace.objects.select_for_update().filter(id=workspace.id).first()
    return workspace_stored_bytes(workspace.id)


def check_limit(value: object) -> int | None:
    """A storage limit as the API takes it: whole bytes (0: none), or null for the setting's."""
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_LIMIT:
        raise BadLimit("'storage_limit' must be whole bytes (0: no limit), or null for the default")
    return value


def do_set_limit(*, workspace: Workspace, limit: int | None) -> Workspace:
    """Set the workspace's own limit (None: the setting's); the caller checked who may."""
    workspace.storage_limit = limit
    workspace.save(update_fields=["storage_limit"])
    return workspace


def as_dict(workspace: Workspace) -> dict[str, Any]:
    """What its sessions store and its limit (0: none), and its own figure (None: the setting's)."""
    return {
        "used": workspace_stored_bytes(workspace.id),
        "limit": limit_of(workspace),
        "own_limit": workspace.storage_limit,
    }
