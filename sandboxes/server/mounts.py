"""Mount points: a private mount namespace for sandboxd, and a mount test that sees bind mounts."""

from __future__ import annotations

import ctypes
import os
import subprocess
from pathlib import Path

CLONE_NEWNS = 0x00020000


def enter_private_namespace() -> bool:
    """Give this process its own mount namespace (root only; call before starting threads).

    Workdir tmpfs and staging mounts then exist only for sandboxd and its sandboxes, and
    vanish with it, however it ends. Returns False where we may not (not root).
    """
    if os.geteuid() != 0:
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNS) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS) failed")
    subprocess.run(["mount", "--make-rprivate", "/"], check=True)
    return True


def is_mount_point(path: Path) -> bool:
    """os.path.ismount misses bind mounts within one filesystem; the mount table does not."""
    target = os.path.realpath(path)
    with open("/proc/self/mountinfo") as table:
        return any(_unescape(line.split()[4]) == target for line in table)


def _unescape(field: str) -> str:
    return field.encode().decode("unicode_escape") if "\\" in field else field
