"""What sandboxd keeps of a paused sandbox: its identity, its clock and the snapshot holding its
state, written to disk beside the snapshots so a restarted sandboxd can still resume it."""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sandboxes.server.snapshot_ids import SNAPSHOT_ID

log = logging.getLogger(__name__)


@dataclass
class PausedSandbox:
    """``last_used`` is wall-clock time (it must survive a restart); ``why`` says what paused it."""

    id: str
    template: str
    metadata: dict[str, str]
    created_at: float
    ttl_seconds: int
    last_used: float
    snapshot_id: str
    why: str
    paused_at: float = field(default_factory=time.time)
    default_context_id: str = ""
    context_ids: list[str] = field(default_factory=list)
    unsaved: list[str] = field(default_factory=list)  # variables the pause could not keep
    idempotency_key: str = ""

    def seconds_left(self) -> float:
        return self.ttl_seconds - (time.time() - self.last_used)

    def is_expired(self) -> bool:
        return self.seconds_left() <= 0

    def info(self) -> dict[str, object]:
        return {
            "id": self.id,
            "state": "paused",
            "template": self.template,
            "metadata": self.metadata,
            "created_at": self.created_at,
            "ttl_seconds": self.ttl_seconds,
            "expires_in": max(0.0, round(self.seconds_left(), 3)),
            "default_context_id": self.default_context_id,
            "contexts": [{"id": cid, "language": "python", "busy": False} for cid in self.context_ids],
            "paused": {"at": self.paused_at, "why": self.why, "unsaved": self.unsaved},
        }


class PausedRecords:
    """One JSON file per paused sandbox in ``root``, written by rename."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def save(self, record: PausedSandbox) -> None:
        path = self._path(record.id)
        partial = path.with_suffix(".partial")
        partial.write_text(json.dumps(asdict(record)))
        os.replace(partial, path)

    def remove(self, sandbox_id: str) -> None:
        self._path(sandbox_id).unlink(missing_ok=True)

    def load_all(self) -> dict[str, PausedSandbox]:
        """Every record on disk; an unreadable one is logged and left out."""
        records = {}
        for path in sorted(self.root.glob("*.json")):
            try:
                record = PausedSandbox(**_checked(json.loads(path.read_text())))
            except (OSError, ValueError, TypeError) as exc:
                log.warning("ignoring paused sandbox record %s: %s", path.name, exc)
                continue
            records[record.id] = record
        return records

    def _path(self, sandbox_id: str) -> Path:
        if not SNAPSHOT_ID.match(sandbox_id):
            raise ValueError(f"not a sandbox id: {sandbox_id!r}")
        return self.root / f"{sandbox_id}.json"


def _checked(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict) or not SNAPSHOT_ID.match(str(body.get("id", ""))):
        raise ValueError("not a paused sandbox record")
    if not SNAPSHOT_ID.match(str(body.get("snapshot_id", ""))):
        raise ValueError("the record names no snapshot")
    return body
