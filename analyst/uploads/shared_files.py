"""Stored files shared by a session and its copies (forks, branches, runs on another file): a copy
names the same stored upload or chart, which is deleted once no row names it, and making copies is
refused when what they add to their owner's storage would take it past the limit.

A copy adds nothing to the storage of the user whose session it copies (accounts.storage counts
each stored file once); a fork through another user's share link adds the files to the forker's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models.fields.files import FieldFile

from analyst.accounts import limits as user_limits
from analyst.accounts import workspace_storage
from analyst.accounts.storage import stored_bytes
from analyst.models import AnalysisSession, Artifact, DataFile


def hold_files_of(session_id: object) -> None:
    """Lock the session's row until the transaction ends, before copying or deleting its files'
    rows: a copy made meanwhile would name a stored file its deletion's check did not see.
    The session's row comes before the user's (turns.do_start_turn's order)."""
    AnalysisSession.objects.select_for_update().filter(id=session_id).first()


@contextmanager
def within_storage_limit(
    owner: AbstractBaseUser, *, what: str, into: AnalysisSession | None = None
) -> Iterator[None]:
    """Around copies made in one transaction for ``owner`` (into the session ``into``, when a team
    workspace's): LimitReached when they grew the owner's storage, or that workspace's, past its
    limit (then the transaction, rolled back, leaves nothing half made). Copies that add nothing
    pass even over the limit: they take no more room."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("copies are checked inside the transaction that makes them")
    user_limits.hold_user(owner)  # two copies at once are counted one after the other
    before = stored_bytes(owner)
    workspace_before = None if into is None else workspace_storage.stored_now(into)
    yield
    grown = stored_bytes(owner) - before
    if grown > 0:
        user_limits.check_storage(owner, adding=grown, what=what, stored=before)
    if into is not None and workspace_before is not None:
        grown = workspace_storage.stored_now(into) - workspace_before
        if grown > 0:
            workspace_storage.check_storage(into, adding=grown, what=what, stored=workspace_before)


def release(stored: Iterable[FieldFile]) -> None:
    """Delete each stored upload or chart once the transaction commits, unless a row (a copy's)
    still names it: call it after deleting the rows that named them."""
    names = [(field_file.storage, field_file.name) for field_file in stored if field_file.name]

    def delete_unnamed() -> None:
        for storage, name in names:
            if not _named(name):
                storage.delete(name)

    transaction.on_commit(delete_unnamed)


def _named(name: str) -> bool:
    return DataFile.objects.filter(stored=name).exists() or Artifact.objects.filter(file=name).exists()
