"""Make template runtimes reachable by the unprivileged sandbox users, and anonymous.

When sandboxd is root, bubblewrap runs as an unprivileged host user, and it can only bind
paths that user can reach. Every runtime path (the template, its interpreter, even under /root)
is staged first: a read-only overlay of it is mounted on a reachable folder, and the sandbox sees
that at the path it expects. An overlay is a filesystem of its own, so /proc/self/mountinfo inside
shows "/" as its root and ``lowerdir=layer:empty`` (relative names, given from a folder of ours) as
its options: not the host path a bind mount would show. The folder for kernels' runtime files is
a tmpfs of ours for the same reason.
"""

from __future__ import annotations

import logging
import os
import stat
import subprocess
from collections.abc import Iterable
from pathlib import Path

from sandboxes.server import workdirs
from sandboxes.templates import Template

# Where kernels see their template's interpreter (its virtualenv's home), whatever its host path.
PYTHON_MOUNT_POINT = Path("/opt/python")

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
        # Runtime paths kernels see elsewhere than on the host: host path → path inside.
        self.relocated: dict[Path, Path] = {}
        # What kernels need in their environment for that (where a relocated libpython is).
        self.environment: dict[str, str] = {}

    def check_reachable(self, path: Path, what: str) -> None:
        if not reachable_by(path, *self.owner):
            raise PathUnreachable(
                f"{what} {path} cannot be reached by the sandbox user (uid {self.owner[0]});"
                " move it, or give every folder above it o+x"
            )

    def stage(self, paths: Iterable[Path]) -> dict[Path, Path]:
        """Map each path to a reachable read-only overlay of it."""
        for path in paths:
            if path not in self.staged:
                self.staged[path] = self._overlay(path)
        return self.staged

    def stage_template(self, template: Template) -> None:
        """Stage the template and its interpreter, which kernels then see at PYTHON_MOUNT_POINT
        (``relocated``), not at its host path: the template's overlay has a layer on top whose
        pyvenv.cfg and interpreter links name PYTHON_MOUNT_POINT instead."""
        base = template.base_prefix()
        if base not in self.staged:
            self.staged[base] = self._overlay(base)
        self.relocated[base] = PYTHON_MOUNT_POINT
        if any((base / "lib").glob("libpython*.so*")):  # a shared build: its RUNPATH names ``base``
            self.environment["LD_LIBRARY_PATH"] = str(PYTHON_MOUNT_POINT / "lib")
        root = template.root.resolve()
        if root not in self.staged:
            self.staged[root] = self._overlay(root, top=self._venv_layer(template, base))

    def _venv_layer(self, template: Template, base: Path) -> str:
        """A folder (its name, in the layers folder) holding the venv files that name ``base``."""
        name = f"venv{len(self.staged)}"
        venv = self._layers() / name / template.venv.relative_to(template.root)
        (venv / "bin").mkdir(parents=True)
        lines = []
        for line in (template.venv / "pyvenv.cfg").read_text().splitlines():
            key = line.partition("=")[0].strip()
            if key == "home":
                lines.append(f"home = {PYTHON_MOUNT_POINT / 'bin'}")
            elif key not in ("executable", "command"):  # host paths, of no use to a kernel
                lines.append(line)
        (venv / "pyvenv.cfg").write_text("\n".join(lines) + "\n")
        for link in (template.venv / "bin").iterdir():
            if link.is_symlink() and Path(os.readlink(link)).is_relative_to(base):
                relocated = PYTHON_MOUNT_POINT / Path(os.readlink(link)).relative_to(base)
                (venv / "bin" / link.name).symlink_to(relocated)
        return name

    def _layers(self) -> Path:
        """Where the overlays' lower folders are named from, by relative names: mountinfo shows them."""
        self.root.mkdir(parents=True, exist_ok=True)
        self.root.chmod(0o755)
        self.check_reachable(self.root, "the staging folder")
        layers = self.root / "layers"
        (layers / "empty").mkdir(parents=True, exist_ok=True)  # an overlay without upper needs two
        return layers

    def _overlay(self, path: Path, top: str = "") -> Path:
        layers = self._layers()
        target = self.root / str(len(self.staged))
        target.mkdir()
        (layers / "layer").symlink_to(path.resolve())
        lower = f"{top}:layer" if top else "layer:empty"
        try:
            subprocess.run(
                ["mount", "-t", "overlay", "-o", f"lowerdir={lower}", "none", str(target)],
                cwd=layers,
                check=True,
            )
        finally:
            (layers / "layer").unlink()
        log.info("staged %s at %s for the sandbox users", path, target)
        return target

    def runtime_root(self, size_bytes: int = 64 << 20) -> Path:
        """A tmpfs of ours for kernels' runtime folders (connection file, sockets)."""
        path = self.root / "kernels"
        path.mkdir(mode=0o755)
        options = f"size={size_bytes},mode=0755,nosuid,nodev,noexec"
        subprocess.run(["mount", "-t", "tmpfs", "-o", options, "none", str(path)], check=True)
        return path

    def clear(self) -> None:
        """Undo every staging mount, ours or a killed predecessor's."""
        if self.root.exists():
            for target in self.root.iterdir():
                workdirs.destroy(target)
        self.staged = {}
        self.relocated = {}
        self.environment = {}
