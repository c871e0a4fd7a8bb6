"""Request bodies held to their limit while they arrive: an upload over ANALYST_MAX_UPLOAD (and any
other body over DATA_UPLOAD_MAX_MEMORY_SIZE) is cut there with a 413, never spooled whole first.

Two places see a body arrive. Django's ASGI handler reads the whole body into a temporary file
before any middleware or view runs, so ``BodyLimit`` (ASGI middleware around Django) counts the
bytes as the server hands them over: a declared Content-Length over the limit is refused before a
byte is read, and a body without one (chunked) is cut as soon as it passes the limit. Then the
multipart parser writes each file to FILE_UPLOAD_TEMP_DIR: ``UploadLimitHandler`` (first in
FILE_UPLOAD_HANDLERS) stops it once the files together pass ANALYST_MAX_UPLOAD, for a server that
hands Django the body as a stream (WSGI) rather than whole.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.core.files.uploadhandler import FileUploadHandler

from analyst.lib.raw_asgi import header, respond
from analyst.lib.sizes import human_size

# Multipart framing around an upload's file: its boundaries and part headers, and small fields
# (as analyst/api/errors.py allows for a declared length).
MULTIPART_ALLOWANCE = 64 << 10


class UploadTooLarge(RequestDataTooBig):
    """The files of a multipart body passed ANALYST_MAX_UPLOAD (a 413 under /api/)."""


def body_limit(scope: dict[str, Any]) -> int | None:
    """Bytes an HTTP request's body may have: an upload's file limit plus its framing, or Django's."""
    if _is_multipart(scope):
        return settings.ANALYST_MAX_UPLOAD + MULTIPART_ALLOWANCE
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def _is_multipart(scope: dict[str, Any]) -> bool:
    return header(scope, b"content-type").split(";", 1)[0].strip().lower() == "multipart/form-data"


class BodyLimit:
    """ASGI middleware for Django's HTTP side: a 413 for a body over ``body_limit``, refused on its
    declared length or cut where it passes the limit (Django is told the client left, so it
    stops reading and answers nothing; we answer)."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        limit = body_limit(scope) if scope["type"] == "http" else None
        if limit is None:
            await self.application(scope, receive, send)
            return
        declared = header(scope, b"content-length")
        if declared.isdigit() and int(declared) > limit:
            await _too_large(scope, send)
            return
        received, cut, answered = 0, False, False

        async def limited_receive() -> dict[str, Any]:
            nonlocal received, cut
            if cut:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    cut = True
                    return {"type": "http.disconnect"}
            return message

        async def watched_send(message: dict[str, Any]) -> None:
            nonlocal answered
            answered = answered or message["type"] == "http.response.start"
            await send(message)

        await self.application(scope, limited_receive, watched_send)
        if cut and not answered:
            await _too_large(scope, send)


class UploadLimitHandler(FileUploadHandler):
    """Count the bytes of every file in a multipart body; past ANALYST_MAX_UPLOAD (and the
    framing's slack), stop the parse (and so the spooling) with UploadTooLarge."""

    def __init__(self, request: Any = None) -> None:
        super().__init__(request)
        self.received = 0

    def handle_raw_input(self, *args: Any, **kwargs: Any) -> None:
        self.received = 0

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        self.received += len(raw_data)
        # With the framing's slack, as BodyLimit: a file just over the limit gets check_upload's
        # own refusal (400, naming the file), one far over is cut here.
        if self.received > settings.ANALYST_MAX_UPLOAD + MULTIPART_ALLOWANCE:
            for handler in getattr(self.request, "upload_handlers", []):
                if getattr(handler, "file", None) is not None:
                    handler.file.close()  # a temporary file is deleted as it closes
            raise UploadTooLarge(_message(multipart=True))
        return raw_data  # on to the next handler, which stores it

    def file_complete(self, file_size: int) -> None:
        return None  # not ours to keep: the temporary-file handler after us keeps it


def _message(*, multipart: bool) -> str:

    if multipart:  # the limit a person chose (the framing's slack is ours to know)
        return f"the upload is larger than the limit of {human_size(settings.ANALYST_MAX_UPLOAD)}"
    return f"the request body is larger than the limit of {human_size(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)}"


async def _too_large(scope: dict[str, Any], send: Any) -> None:
    message = _message(multipart=_is_multipart(scope))
    if scope.get("path", "").startswith("/api/"):
        body = json.dumps({"error": {"code": "request_too_large", "message": message}}).encode()
        content_type = b"application/json"
    else:
        body, content_type = message.encode(), b"text/plain; charset=utf-8"
    # The rest of the body is never read: this connection cannot carry another request.
    await respond(send, 413, body, content_type, [(b"connection", b"close")])
