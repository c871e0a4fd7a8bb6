"""Make template runtimes reachable by the unprivileged sandbox user.

When sandboxd is root, bubblewrap runs as an unprivileged host user, and it can only bind
paths that user can reach. A template whose interpreter lives under /root (pyenv, say) is
bound read-only onto a reachable folder first, and the sandbox sees it at its original path.
"""

from __future__ import annotations

import logging
import os
import stat
import subprocess
from collections.abc import Iterable
from pathlib import Path

from sandboxes.server import workdirs

log = logging.getLogger(__name__)


class PathUnreachable(RuntimeError):
    pass


def reachable_by(path: Path, uid: int, gid: int) -> bool:
    """Whether ``uid``/``gid`` may walk down every folder of ``path``."""
    current = Path("/")
    for part in path.resolve().parts[1:]:
        if not _may_search(current.stat(), uid, gid):
            return False
        current = current / part
    return _may_search(current.stat(), uid, gid)


def _may_search(info: os.stat_result, uid: int, gid: int) -> bool:
    if info.st_uid == uid:
        return bool(info.st_mode & stat.S_IXUSR)
    if info.st_gid == gid:
        return bool(info.st_mode & stat.S_IXGRP)
    return bool(info.st_mode & stat.S_IXOTH)


class Stager:
    """Read-only bind mounts under ``root`` for runtime paths the sandbox user cannot reach."""

    def __init__(self, root: Path, owner: tuple[int, int]) -> None:
        self.root = root
        self.owner = owner
        self.staged: dict[Path, Path] = {}

    def check_reachable(self, path: Path, what: str) -> None:
        if not reachable_by(path, *self.owner):
            raise PathUnreachable(
                f"{what} {path} cannot be reached by the sandbox user (uid {self.owner[0]});"
                " move it, or give every folder above it o+x"
            )

    def stage(self, paths: Iterable[Path]) -> dict[Path, Path]:
        """Map each unreachable path to a reachable read-only copy (a bind mount) of it."""
        self.root.mkdir(parents=True, exist_ok=True)
        self.root.chmod(0o755)
        self.check_reachable(self.root, "the staging folder")
        for path in paths:
            if path in self.staged or reachable_by(path, *self.owner):
                continue
            target = self.root / str(len(self.staged))
            target.mkdir()
            subprocess.run(["mount", "--bind", str(path), str(target)], check=True)
            subprocess.run(["mount", "-o", "remount,bind,ro", str(target)], check=True)
            log.info("staged %s at %s for the sandbox user", path, target)
            self.staged[path] = target
        return self.staged

    def clear(self) -> None:
        """Undo every staging mount, ours or a killed predecessor's."""
        if self.root.exists():
            for target in self.root.iterdir():
                workdirs.destroy(target)
        self.staged = {}
