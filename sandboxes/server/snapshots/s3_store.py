"""Snapshots in an S3-compatible object store (AWS S3, MinIO, Ceph...), so that several sandboxd
hosts share them: a session saved on one host is restored on another.

A snapshot is one object, ``<prefix><id>.snapshot``, uploaded whole once it is finished (in
parts, streamed from disk) and read back into a local file for a restore. Credentials come from
boto3's usual sources (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile, an instance role).
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from sandboxes.errors import ServiceUnavailable, SnapshotNotFound
from sandboxes.server.snapshot_ids import check_id

MISSING = {"404", "NoSuchKey", "NotFound"}
CLIENT_CONFIG = Config(retries={"max_attempts": 5, "mode": "standard"}, connect_timeout=5, read_timeout=60)
# Large snapshots go up and down in 16 MiB parts, four at a time.
TRANSFER = TransferConfig(multipart_threshold=16 << 20, multipart_chunksize=16 << 20, max_concurrency=4)


class S3SnapshotStore:
    def __init__(
        self,
        *,
        bucket: str,
        prefix: str = "snapshots/",
        scratch: Path,
        endpoint_url: str | None = None,
        region: str | None = None,
        client: Any = None,
    ) -> None:
        self.bucket = bucket
        self.prefix = prefix
        self.scratch = scratch
        scratch.mkdir(parents=True, exist_ok=True)
        self.client = client or boto3.client(
            "s3",
            endpoint_url=endpoint_url or None,
            region_name=region or None,
            config=CLIENT_CONFIG,
        )

    def _key(self, snapshot_id: str) -> str:
        return f"{self.prefix}{check_id(snapshot_id)}.snapshot"

    def put(self, snapshot_id: str, finished: Path) -> None:
        key = self._key(snapshot_id)
        with _unavailable_as_errors(snapshot_id):
            self.client.upload_file(str(finished), self.bucket, key, Config=TRANSFER)
        finished.unlink()

    @contextlib.contextmanager
    def fetch(self, snapshot_id: str) -> Iterator[Path]:
        key = self._key(snapshot_id)
        with tempfile.TemporaryDirectory(dir=self.scratch, prefix="fetched-") as folder:
            path = Path(folder) / f"{snapshot_id}.snapshot"
            with _unavailable_as_errors(snapshot_id):
                self.client.download_file(self.bucket, key, str(path), Config=TRANSFER)
            yield path

    def delete(self, snapshot_id: str) -> None:
        key = self._key(snapshot_id)
        with _unavailable_as_errors(snapshot_id):
            self.client.head_object(Bucket=self.bucket, Key=key)  # S3 deletes a missing key quietly
            self.client.delete_object(Bucket=self.bucket, Key=key)


@contextlib.contextmanager
def _unavailable_as_errors(snapshot_id: str) -> Iterator[None]:
    """A missing object is SnapshotNotFound; a store that fails or cannot be reached is a
    retryable ServiceUnavailable that says so."""
    try:
        yield
    except ClientError as exc:
        error = exc.response.get("Error", {})
        if str(error.get("Code")) in MISSING:
            raise SnapshotNotFound(f"no snapshot {snapshot_id}") from None
        refused = f"{error.get('Code')}: {error.get('Message')}"
        raise ServiceUnavailable(f"the snapshot store refused: {refused}") from None
    except BotoCoreError as exc:
        raise ServiceUnavailable(f"the snapshot store cannot be reached: {exc}") from None
