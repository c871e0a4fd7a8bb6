"""The files panel: a session's uploads, and the files its code wrote, listed and downloaded.

Files the code wrote live only in the session's sandbox (and its snapshots): they are listed
while the sandbox runs. Nothing here starts a sandbox; an upload downloads from our own copy
when the sandbox is gone. A download is streamed: an async iterator, which the ASGI server
sends chunk by chunk, so no file is held whole in memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import mimetypes
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

from django.core.files import File
from django.http import Http404

from analyst.connections.redaction import redacted_chunks
from analyst.connections.session_secrets import redactor_for
from analyst.files.reports import upload_entry
from analyst.kernels import hosts as sandbox_hosts
from analyst.models import AnalysisSession
from sandboxes import FileNotFound, InvalidPath, Sandbox, SandboxError

log = logging.getLogger(__name__)

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
        sandbox = Sandbox.connect(session.sandbox_id, url=sandbox_hosts.url(session.sandbox_host))
    except SandboxError:
        yield None
        return
    try:
        yield sandbox
    finally:
        sandbox.close()


def listing(session: AnalysisSession) -> list[dict[str, object]]:
    """The uploads (with what the sandbox found in them), then the files the code wrote; the
    files an upload unpacked to (a zip's) are its tables, not outputs."""
    uploads = list(session.files.all())
    entries: list[dict[str, object]] = [upload_entry(f) for f in uploads]
    theirs = {t["path"] for f in uploads for t in (f.description or {}).get("tables", [])}
    theirs |= {f.path for f in uploads}
    with live_sandbox(session) as sandbox:
        if sandbox is not None:
            for path, size in _walk(sandbox, ".", 0):
                if path not in theirs and len(entries) < MAX_LISTED:
                    entries.append(_output_entry(path, size))
    return entries


def _output_entry(path: str, size: int) -> dict[str, object]:
    return {
        "path": path,
        "name": path.rsplit("/", 1)[-1],
        "size": size,
        "rows": None,
        "columns": None,
        "kind": "output",
    }


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
    """The file at ``path``: from the sandbox while it runs, else an upload's stored copy.
    Http404 when neither has it, including a file that vanished since it was listed: its read
    has begun before we answer, so a 200 always has a file behind it."""
    if any(part.startswith(".") for part in path.split("/")):
        raise Http404("no such file")  # hidden, as in the listing: sandboxd's state, connections' databases
    name = path.rsplit("/", 1)[-1]
    content_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
    redactor = redactor_for(session)  # the session's secrets shown as «secret:NAME», as everywhere
    chunks = _open_in_sandbox(session, path)
    if chunks is not None:
        return Download(redacted_chunks(chunks, redactor), name, content_type, None)
    upload = session.files.filter(path=path).first()
    if upload is None:
        raise Http404("no such file")
    try:
        size = upload.stored.size
        stream = upload.stored.storage.open(upload.stored.name, "rb")  # opened before we answer
    except FileNotFoundError:  # deleted with its session, or by hand, since the row was read
        raise Http404("no such file") from None
    chunks = redacted_chunks(_from_storage(stream), redactor)
    return Download(chunks, upload.name, content_type, None if redactor else size)


def _open_in_sandbox(session: AnalysisSession, path: str) -> AsyncIterator[bytes] | None:
    """The file's bytes from the session's sandbox, its first chunk already read (so a file gone
    by now is found here, not after a 200); None when the sandbox has no file there."""
    if not session.sandbox_id:
        return None
    try:
        sandbox = Sandbox.connect(session.sandbox_id, url=sandbox_hosts.url(session.sandbox_host))
    except SandboxError:
        return None
    try:
        # No listing first: sandboxd reads only a regular file (InvalidPath for anything else), and
        # a listing is paged, so a file past its first page would seem missing.
        stream = iter(sandbox.files.read_chunks(path))
        first = next(stream, b"")
        return _from_sandbox(sandbox, path, stream, first)
    except (FileNotFound, InvalidPath):
        pass
    except BaseException:
        sandbox.close()
        raise
    sandbox.close()
    return None


async def _from_sandbox(
    sandbox: Sandbox, path: str, stream: Iterator[bytes], first: bytes
) -> AsyncIterator[bytes]:
    """The rest of a read begun in ``_open_in_sandbox``, each chunk fetched off the event loop. A
    read that fails midway (the file cut short under it) raises, and the server ends the
    response unfinished: the client sees a broken download, never a whole-looking short one."""
    try:
        if first:
            yield first
        while (chunk := await asyncio.to_thread(next, stream, None)) is not None:
            yield chunk
    except Exception as error:
        log.warning("the download of %s from sandbox %s failed midway: %r", path, sandbox.sandbox_id, error)
        raise
    finally:
        await asyncio.to_thread(_close, sandbox, stream)


def _close(sandbox: Sandbox, stream: Iterator[bytes]) -> None:
    try:
        close = getattr(stream, "close", None)
        if close is not None:
            close()  # ends the response from sandboxd
    except ValueError:  # still reading in another thread (the client left): closing the client ends it
        pass
    finally:
        sandbox.close()


async def _from_storage(stream: File) -> AsyncIterator[bytes]:
    try:
        while chunk := await asyncio.to_thread(stream.read, CHUNK):
            yield chunk
    finally:
        await asyncio.to_thread(stream.close)
