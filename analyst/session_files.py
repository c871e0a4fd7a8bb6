"""The files panel: a session's uploads, and the files its code wrote, listed and downloaded.

Files the code wrote live only in the session's sandbox (and its snapshots): they are listed
while the sandbox runs. Nothing here starts a sandbox; an upload downloads from our own copy
when the sandbox is gone. A download is streamed: an async iterator, which the ASGI server
sends chunk by chunk, so no file is held whole in memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import mimetypes
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

from django.db.models.fields.files import FieldFile
from django.http import Http404

from analyst.models import AnalysisSession, DataFile
from sandboxes import AsyncSandbox, FileNotFound, InvalidPath, Sandbox, SandboxError

MAX_DEPTH = 3
MAX_LISTED = 300
CHUNK = 1 << 20


@dataclass(frozen=True)
class Download:
    chunks: AsyncIterator[bytes]
    name: str
    content_type: str
    size: int | None  # None for a file the code wrote: it may still be growing


@contextlib.contextmanager
def live_sandbox(session: AnalysisSession) -> Iterator[Sandbox | None]:
    if not session.sandbox_id:
        yield None
        return
    try:
        sandbox = Sandbox.connect(session.sandbox_id)
    except SandboxError:
        yield None
        return
    try:
        yield sandbox
    finally:
        sandbox.close()


def listing(session: AnalysisSession) -> list[dict[str, object]]:
    uploads = {f.path: f for f in session.files.all()}
    entries = [_upload_entry(f) for f in uploads.values()]
    with live_sandbox(session) as sandbox:
        if sandbox is not None:
            for path, size in _walk(sandbox, ".", 0):
                if path not in uploads and len(entries) < MAX_LISTED:
                    entries.append(_entry(path, path.rsplit("/", 1)[-1], size, "output"))
    return entries


def _upload_entry(upload: DataFile) -> dict[str, object]:
    """An upload's row; one that could not be put in the sandbox also says so, and why."""
    entry = _entry(upload.path, upload.name, upload.size, "upload", rows=upload.rows, columns=upload.columns)
    if upload.placement == DataFile.Placement.FAILED:
        entry.update(id=upload.id, status=upload.placement, error=upload.placement_error)
    return entry


def _entry(
    path: str, name: str, size: int, kind: str, *, rows: int | None = None, columns: int | None = None
) -> dict[str, object]:
    return {"path": path, "name": name, "size": size, "rows": rows, "columns": columns, "kind": kind}


def _walk(sandbox: Sandbox, folder: str, depth: int) -> Iterator[tuple[str, int]]:
    try:
        entries = sandbox.files.list(folder)
    except SandboxError:
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue  # hidden: sandboxd's own state folder, caches
        if entry.type == "file":
            yield entry.path, entry.size
        elif entry.type == "dir" and depth < MAX_DEPTH:
            yield from _walk(sandbox, entry.path, depth + 1)


def download(session: AnalysisSession, path: str) -> Download:
    """The file at ``path``: from the sandbox while it runs, else an upload's stored copy."""
    name = path.rsplit("/", 1)[-1]
    content_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
    with live_sandbox(session) as sandbox:
        if sandbox is not None:
            with contextlib.suppress(FileNotFound, InvalidPath):
                entry = next((e for e in sandbox.files.list(_folder(path)) if e.path == path), None)
                if entry is not None and entry.type == "file":
                    return Download(_from_sandbox(sandbox.sandbox_id, path), name, content_type, None)
    upload = session.files.filter(path=path).first()
    if upload is None:
        raise Http404("no such file")
    return Download(_from_storage(upload.stored), upload.name, content_type, upload.stored.size)


async def _from_sandbox(sandbox_id: str, path: str) -> AsyncIterator[bytes]:
    sandbox = await AsyncSandbox.connect(sandbox_id)
    try:
        async for chunk in sandbox.files.read_chunks(path):
            yield chunk
    finally:
        await sandbox.close()


async def _from_storage(stored: FieldFile) -> AsyncIterator[bytes]:
    stream = await asyncio.to_thread(stored.storage.open, stored.name, "rb")
    try:
        while chunk := await asyncio.to_thread(stream.read, CHUNK):
            yield chunk
    finally:
        await asyncio.to_thread(stream.close)


def _folder(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else "."
