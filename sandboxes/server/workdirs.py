"""Sandbox workdirs: a size-capped tmpfs per sandbox where we may mount one, else a plain folder."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from pathlib import Path

log = logging.getLogger(__name__)


def can_mount() -> bool:
    return os.geteuid() == 0 and shutil.which("mount") is not None


def create(path: Path, quota_bytes: int) -> None:
    """Make ``path`` a workdir holding at most ``quota_bytes`` (strictly, where we can mount)."""
    path.mkdir(parents=True, mode=0o700)
    if can_mount():
        options = f"size={quota_bytes},mode=0700,nosuid,nodev"
        subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], check=True)


def destroy(path: Path) -> None:
    if os.path.ismount(path):
        subprocess.run(["umount", "-l", str(path)], check=False)
    shutil.rmtree(path, ignore_errors=True)


def usage_bytes(path: Path) -> int:
    if os.path.ismount(path):
        stats = os.statvfs(path)
        return (stats.f_blocks - stats.f_bfree) * stats.f_frsize
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())
