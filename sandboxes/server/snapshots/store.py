"""Where snapshot files live. Local disk by default; the interface is what an object store offers
(put a finished file, get it back as a local file, delete), so one can take its place."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from sandboxes.errors import SnapshotNotFound

SNAPSHOT_ID = re.compile(r"^[0-9a-f]{32}$")


class SnapshotStore(Protocol):
    def put(self, snapshot_id: str, finished: Path) -> None:
        """Keep ``finished`` (the store may move it) as ``snapshot_id``."""

    def fetch(self, snapshot_id: str) -> contextlib.AbstractContextManager[Path]:
        """A local, readable file of the snapshot for the ``with`` block. Raises SnapshotNotFound."""

    def delete(self, snapshot_id: str) -> None:
        """Forget the snapshot. Raises SnapshotNotFound."""


def check_id(snapshot_id: str) -> str:
    if not SNAPSHOT_ID.match(snapshot_id):
        raise SnapshotNotFound(f"no snapshot {snapshot_id!r}")
    return snapshot_id


class LocalSnapshotStore:
    """One file per snapshot in ``root``, written by rename so a reader never sees half of one."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def _path(self, snapshot_id: str) -> Path:
        return self.root / f"{check_id(snapshot_id)}.snapshot"

    def put(self, snapshot_id: str, finished: Path) -> None:
        target = self._path(snapshot_id)
        shutil.move(finished, target.with_suffix(".partial"))
        os.replace(target.with_suffix(".partial"), target)

    @contextlib.contextmanager
    def fetch(self, snapshot_id: str) -> Iterator[Path]:
        path = self._path(snapshot_id)
        if not path.is_file():
            raise SnapshotNotFound(f"no snapshot {snapshot_id}")
        yield path

    def delete(self, snapshot_id: str) -> None:
        try:
            self._path(snapshot_id).unlink()
        except FileNotFoundError:
            raise SnapshotNotFound(f"no snapshot {snapshot_id}") from None
