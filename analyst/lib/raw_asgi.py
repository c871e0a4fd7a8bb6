"""What the ASGI apps in front of Django (the MCP endpoint, the body limit) need to read a request's
headers and answer one by themselves."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Headers = Sequence[tuple[bytes, bytes]]


def header(scope: dict[str, Any], name: bytes) -> str:
    """The request's header ``name`` (lower-case bytes), or ""."""
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return value.decode("latin1")
    return ""


async def respond(send: Any, status: int, body: bytes, content_type: bytes, extra: Headers = ()) -> None:
    """A whole response: ``body`` with its type and length, and any ``extra`` headers."""
    headers = [(b"content-type", content_type), (b"content-length", str(len(body)).encode()), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
