"""Sandbox workdirs: a size-capped tmpfs per sandbox where we may mount one, else a plain folder."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from sandboxes.server.mounts import is_mount_point


def can_mount() -> bool:
    return os.geteuid() == 0 and shutil.which("mount") is not None


def create(path: Path, quota_bytes: int, owner: tuple[int, int] | None = None) -> None:
    """Make ``path`` a workdir holding at most ``quota_bytes`` (strictly, where we can mount),
    belonging to ``owner`` (uid, gid) where given."""
    path.mkdir(parents=True, mode=0o700)
    if can_mount():
        options = f"size={quota_bytes},mode=0700,nosuid,nodev"
        subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], check=True)
    if owner:  # chown, not tmpfs's uid= option: /proc/self/mountinfo inside would show that
        os.chown(path, *owner)


def destroy(path: Path) -> None:
    """Unmount (if mounted) and delete; never follows a mount's contents off the host folder."""
    if is_mount_point(path):
        subprocess.run(["umount", "-l", str(path)], check=False)
    if is_mount_point(path):
        return
    shutil.rmtree(path, ignore_errors=True)
