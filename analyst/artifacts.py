"""Rich results: small MIME parts stay in the event, large ones become stored artifacts."""

from __future__ import annotations

import base64
import json
from typing import Any

from django.core.files.base import ContentFile

from analyst.models import AnalysisSession, Artifact

INLINE_LIMIT = 16 << 10
EXTENSIONS = {
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/svg+xml": ".svg",
    "text/html": ".html",
    "application/vnd.plotly.v1+json": ".json",
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
    artifact.file.save(f"result{EXTENSIONS.get(mime, '.bin')}", ContentFile(content), save=False)
    artifact.save()
    return {"id": str(artifact.id), "size": artifact.size, "url": f"/api/artifacts/{artifact.id}"}
