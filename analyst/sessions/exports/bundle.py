"""An export with what it needs to run elsewhere, in one .zip: the notebook or the script, a
requirements.txt of the packages its code imports (pinned as the sandbox had them), and the
session's uploads at the paths its cells read them from, all in one folder named for the session.

Written to a temporary file, not memory: the uploads may be large.
"""

from __future__ import annotations

import tempfile
import zipfile
from pathlib import PurePosixPath
from typing import IO

from analyst.models import DataFile
from analyst.sessions.exports import runtime
from analyst.sessions.exports.transcript import Code

CHUNK = 1024 * 1024


def write(
    target: IO[bytes],
    *,
    folder: str,
    export_name: str,
    export: bytes,
    cells: list[Code],
    files: list[DataFile],
) -> None:
    """The .zip into ``target``: ``export`` as ``export_name``, requirements.txt for ``cells``
    (those that ran without error), and ``files`` at their paths, under ``folder``/."""
    paths = [data_file.path for data_file in files if _inside(data_file.path)]
    sources = [cell.source for cell in cells if not cell.failed]
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr(f"{folder}/{export_name}", export)
        archive.writestr(f"{folder}/requirements.txt", runtime.requirements(sources, paths))
        for data_file in files:
            if _inside(data_file.path):
                _add_file(archive, f"{folder}/{data_file.path}", data_file)


def temporary() -> IO[bytes]:
    """A file for a bundle, gone once closed."""
    return tempfile.TemporaryFile(prefix="export-", suffix=".zip")


def _add_file(archive: zipfile.ZipFile, name: str, data_file: DataFile) -> None:
    with data_file.stored.open("rb") as source, archive.open(name, "w", force_zip64=True) as entry:
        while chunk := source.read(CHUNK):
            entry.write(chunk)


def _inside(path: str) -> bool:
    """A relative path that stays in the folder (the workdir's paths always do; checked anyway)."""
    parts = PurePosixPath(path).parts
    return bool(parts) and not PurePosixPath(path).is_absolute() and ".." not in parts
