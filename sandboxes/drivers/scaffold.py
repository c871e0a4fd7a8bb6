"""A bubblewrap sandbox's root folder, /tmp, /dev and placed files, on a tmpfs that root mounts.

bubblewrap mounts a tmpfs of its own for /, /dev, /tmp and each file it places (--ro-bind-data),
as the unprivileged host user it runs as, and the kernel prints a tmpfs's owner in the host's
terms in /proc/self/mountinfo: every sandbox could read its host uid there. A tmpfs mounted by
root has no owner to print. So sandboxd (root) mounts one per kernel, size-capped, with a folder
for each of those, and bubblewrap binds the folders instead (``--bind base /`` takes the place of
its own root). Their names show in mountinfo as paths inside this tmpfs, never as host paths.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x2, 0x4, 0x8
# A terminal instance of the kernel's own (IPython's `!cmd` runs in a pseudo-terminal), as
# bwrap --dev mounts one; a devpts prints no owner, and ``max`` bounds the terminals it holds.
PTYS = b"newinstance,ptmxmode=0666,mode=0620,max=64"
MNT_DETACH = 0x2
SLACK = 1 << 20  # beyond /tmp's size: the root's mount points and the placed files
LIBC = ctypes.CDLL(None, use_errno=True)


def can_mount() -> bool:
    return os.geteuid() == 0


class Scaffold:
    """The mounted tmpfs at ``path``: ``base`` (the root), ``scratch`` (/tmp), ``devices`` (/dev,
    with a devpts of its own at pts/) and ``placed/<name>`` (files bound read-only where the
    sandbox reads them)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.base = path / "base"
        self.scratch = path / "scratch"
        self.devices = path / "devices"

    @classmethod
    def create(cls, path: Path, size: int, owner: tuple[int, int], files: Mapping[str, bytes]) -> Scaffold:
        """Mount it (root only) holding ``size`` bytes of /tmp, its folders belonging to ``owner``
        (the uid and gid bubblewrap runs as, which makes the mount points and writes /tmp)."""
        path.mkdir(mode=0o755)
        scaffold = cls(path)
        try:
            _mount(b"tmpfs", path, b"tmpfs", MS_NOSUID | MS_NODEV, f"size={size + SLACK},mode=0755".encode())
        except OSError:
            path.rmdir()
            raise
        try:
            for folder, mode in (
                (scaffold.base, 0o755),
                (scaffold.scratch, 0o1777),
                (scaffold.devices, 0o755),
            ):
                folder.mkdir()
                folder.chmod(mode)
                os.chown(folder, *owner)
            (scaffold.devices / "pts").mkdir()
            _mount(b"devpts", scaffold.devices / "pts", b"devpts", MS_NOSUID | MS_NOEXEC, PTYS)
            (path / "placed").mkdir()
            for name, content in files.items():
                scaffold.placed(name).write_bytes(content)
                scaffold.placed(name).chmod(0o444)
        except BaseException:
            scaffold.remove()
            raise
        return scaffold

    def placed(self, name: str) -> Path:
        return self.path / "placed" / name

    def remove(self) -> None:
        """Unmount it and its devpts (lazily: the sandbox's processes may still be dying) and
        delete. Safe twice."""
        LIBC.umount2(str(self.path).encode(), MNT_DETACH)
        with contextlib.suppress(FileNotFoundError):
            if not os.path.ismount(self.path):
                shutil.rmtree(self.path, ignore_errors=True)


def _mount(source: bytes, target: Path, kind: bytes, flags: int, options: bytes) -> None:
    if LIBC.mount(source, str(target).encode(), kind, flags, options) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"mounting the sandbox's {kind.decode()} failed: {os.strerror(code)}")
