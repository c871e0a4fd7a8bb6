"""A folder on a small tmpfs of its own (a disk that fills up quickly), unmounted after use."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def small_tmpfs(size: str = "2m") -> Iterator[Path]:
    """Mounted at a new folder; the test is skipped where mounting is not allowed (needs root)."""
    folder = Path(tempfile.mkdtemp(prefix="small-tmpfs-"))
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
        check=False,
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        folder.rmdir()
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)
        shutil.rmtree(folder)
