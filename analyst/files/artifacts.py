"""Rich results: small MIME parts stay in the event, large ones become stored artifacts; and
saving a file to storage whole or not at all (StorageFull when the disk is full)."""

from __future__ import annotations

import base64
import contextlib
import errno
import json
from typing import Any

from django.core.files import File
from django.core.files.base import ContentFile
from django.db.models.fields.files import FieldFile

from analyst.models import AnalysisSession, Artifact

FULL = (errno.ENOSPC, errno.EDQUOT)


class StorageFull(Exception):
    """The server's storage (MEDIA_ROOT) has no room left for a file; nothing partial was kept.

    Raised out of store_bundle, so out of a run_code ``on_result`` handler: the SDK then ends
    the cell. A turn that gets it ends with an ``error`` event ``{"code": "storage_full",
    "message": str(exc)}``; an upload answers 507 with the same code."""

    code = "storage_full"

    def __init__(self, what: str) -> None:
        super().__init__(
            f"The server's storage is full, so {what} could not be saved. Free some space on the"
            " server (or ask its administrator to), then try again."
        )


INLINE_LIMIT = 16 << 10
EXTENSIONS = {
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/svg+xml": ".svg",
    "text/html": ".html",
    "application/vnd.plotly.v1+json": ".json",
    "application/vnd.dataresource+json": ".json",  # a DataFrame's first rows, for the page's grid
    "application/json": ".json",
}
BINARY = ("image/png", "image/jpeg")


def store_bundle(session: AnalysisSession, bundle: dict[str, Any]) -> dict[str, Any]:
    """The event payload for a MIME bundle: {"data": inline parts, "artifacts": {mime: ref}}."""
    inline: dict[str, Any] = {}
    refs: dict[str, dict[str, Any]] = {}
    for mime, value in bundle.items():
        content = _as_bytes(mime, value)
        if mime in EXTENSIONS and len(content) > INLINE_LIMIT or mime in BINARY:
            refs[mime] = _store(session, mime, content)
        else:
            inline[mime] = value
    return {"data": inline, "artifacts": refs}


def _as_bytes(mime: str, value: Any) -> bytes:
    if mime in BINARY:
        return base64.b64decode(value)
    if isinstance(value, str):
        return value.encode()
    return json.dumps(value).encode()


def _store(session: AnalysisSession, mime: str, content: bytes) -> dict[str, Any]:
    artifact = Artifact(session=session, mime_type=mime, size=len(content))
    what = "a chart" if mime.startswith("image/") else "a table" if mime == "text/html" else "a result"
    save_whole(artifact.file, f"result{EXTENSIONS.get(mime, '.bin')}", ContentFile(content), what=what)
    artifact.save()
    return {"id": str(artifact.id), "size": artifact.size, "url": f"/api/artifacts/{artifact.id}"}


def save_whole(field_file: FieldFile, name: str, content: File, *, what: str) -> None:
    """What ``field_file.save(name, content, save=False)`` does, leaving no partial file behind
    when it fails. ``name`` must be unique (by its upload_to, or made so by the caller), so that
    whatever is found at its path after a failure is ours. A full disk raises StorageFull,
    saying that ``what`` could not be saved."""
    storage, field = field_file.storage, field_file.field
    target = storage.get_available_name(
        field.generate_filename(field_file.instance, name), max_length=field.max_length
    )
    try:
        saved = storage.save(target, content, max_length=field.max_length)
    except OSError as exc:
        with contextlib.suppress(OSError):
            storage.delete(target)
        if exc.errno in FULL:
            raise StorageFull(what) from exc
        raise
    setattr(field_file.instance, field.attname, saved)
