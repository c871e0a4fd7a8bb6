"""A snapshot's id: 32 hex digits, checked before it names a file or an object in a store."""

from __future__ import annotations

import re

from sandboxes.errors import SnapshotNotFound

SNAPSHOT_ID = re.compile(r"^[0-9a-f]{32}$")


def check_id(snapshot_id: str) -> str:
    """``snapshot_id``, if it is one; else SnapshotNotFound."""
    if not SNAPSHOT_ID.match(snapshot_id):
        raise SnapshotNotFound(f"no snapshot {snapshot_id!r}")
    return snapshot_id
