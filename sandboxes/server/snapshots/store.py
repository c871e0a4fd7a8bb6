"""Where snapshot files live. Local disk by default; the interface is what an object store offers
(put a finished file, get it back as a local file, delete), so one takes its place: s3_store."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from sandboxes.errors import SnapshotNotFound
from sandboxes.server.snapshot_ids import check_id

if TYPE_CHECKING:
    from sandboxes.server.config import ServerConfig


class SnapshotStore(Protocol):
    def put(self, snapshot_id: str, finished: Path) -> None:
        """Keep ``finished`` (the store may move it) as ``snapshot_id``."""

    def fetch(self, snapshot_id: str) -> contextlib.AbstractContextManager[Path]:
        """A local, readable file of the snapshot for the ``with`` block. Raises SnapshotNotFound."""

    def delete(self, snapshot_id: str) -> None:
        """Forget the snapshot. Raises SnapshotNotFound."""


class StoreMisconfigured(ValueError):
    """The snapshot store's settings cannot work: sandboxd does not start."""


def store_for(config: ServerConfig) -> SnapshotStore:
    """The store SANDBOXD_SNAPSHOT_STORE names; raises StoreMisconfigured."""
    if config.snapshot_store == "local":
        return LocalSnapshotStore(config.snapshots_root)
    if config.snapshot_store == "s3":
        if not config.s3_bucket:
            raise StoreMisconfigured("SANDBOXD_SNAPSHOT_STORE=s3 needs SANDBOXD_S3_BUCKET")
        from sandboxes.server.snapshots.s3_store import S3SnapshotStore  # boto3, only when used

        return S3SnapshotStore(
            bucket=config.s3_bucket,
            prefix=config.s3_prefix,
            scratch=config.data_dir / "scratch",
            endpoint_url=config.s3_endpoint_url,
            region=config.s3_region,
        )
    raise StoreMisconfigured(f"SANDBOXD_SNAPSHOT_STORE is local or s3, not {config.snapshot_store!r}")


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
