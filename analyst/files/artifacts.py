"""Rich results: small MIME parts stay in the event, large ones become stored artifacts; and
saving a file to storage whole or not at all (StorageFull when the disk is full)."""

from __future__ import annotations

import base64
import contextlib
import errno
import json
from collections.abc import Callable
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
# How each binary type's file begins: a part that decodes to something else is not one.
SIGNATURES = {"image/png": b"\x89PNG\r\n\x1a\n", "image/jpeg": b"\xff\xd8\xff"}
BINARY = tuple(SIGNATURES)
# Why a part of ``size`` bytes (``what``: "a chart") may not be stored (its owner's storage
# limit), or None: the caller's, since this package counts no user's storage.
NoRoom = Callable[[str, int], str | None]


def store_bundle(
    session: AnalysisSession, bundle: dict[str, Any], *, no_room: NoRoom | None = None
) -> dict[str, Any]:
    """The event payload for a MIME bundle: {"data": inline parts, "artifacts": {mime: ref}}.
    A binary part that is not the image it claims to be is left out, and a text/plain notice
    says so: the kernel's code wrote it, and the rest of the result (and turn) stands. So is a
    part to be stored that ``no_room`` gives a reason not to store."""
    inline: dict[str, Any] = {}
    refs: dict[str, dict[str, Any]] = {}
    notices: list[str] = []

    def keep(mime: str, content: bytes) -> None:
        why = no_room(_what(mime), len(content)) if no_room else None
        if why:
            notices.append(f"[a {mime} part of this result was not stored: {why}]")
        else:
            refs[mime] = _store(session, mime, content)

    for mime, value in bundle.items():
        if mime in BINARY:
            image = decoded_image(mime, value)
            if image is None:
                notices.append(not_an_image_notice(mime))
            else:
                keep(mime, image)
            continue
        content = value.encode() if isinstance(value, str) else json.dumps(value).encode()
        if mime in EXTENSIONS and len(content) > INLINE_LIMIT:
            keep(mime, content)
        else:
            inline[mime] = value
    if notices:
        text = inline.get("text/plain")
        inline["text/plain"] = "\n".join(([text] if isinstance(text, str) and text else []) + notices)
    return {"data": inline, "artifacts": refs}


def decoded_image(mime: str, value: object) -> bytes | None:
    """The bytes of a base64 ``image/png`` or ``image/jpeg`` part, or None when it is not one:
    not a string, not base64, or not an image of its type once decoded."""
    if not isinstance(value, str):
        return None
    try:
        content = base64.b64decode(value)
    except ValueError:  # binascii.Error, or a character outside ASCII
        return None
    return content if content.startswith(SIGNATURES[mime]) else None


def not_an_image_notice(mime: str) -> str:
    return f"[a {mime} part of this result was not a valid image, so it was left out]"


def _what(mime: str) -> str:
    return "a chart" if mime.startswith("image/") else "a table" if mime == "text/html" else "a result"


def _store(session: AnalysisSession, mime: str, content: bytes) -> dict[str, Any]:
    artifact = Artifact(session=session, mime_type=mime, size=len(content))
    what = _what(mime)
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
