"""Every error under /api/ is JSON: ``{"error": {"code", "message"}}``, never Django's HTML pages.

The API's views already answer their own errors as JSON (analyst/api/auth.py). What they never
see is answered here: an id that is not a UUID or a path with no route (404 from the URL
resolver), a body over the limit (413, refused before it is parsed), a malformed request Django
refuses itself (400), and a view that raised (500: Django logs the traceback; the client gets
none of it, even with DEBUG on).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse

from analyst.api.auth import error_response
from analyst.lib.sizes import human_size

PREFIX = "/api/"
# Multipart framing around an upload's file: its boundaries and part headers, and small fields.
MULTIPART_ALLOWANCE = 64 << 10
CODES = {
    400: ("bad_request", "the request is malformed"),
    401: ("unauthorized", "log in, or send Authorization: Bearer <token>"),
    403: ("forbidden", "not allowed"),
    405: ("method_not_allowed", "this method is not allowed here"),
    413: ("request_too_large", "the request body is too large"),
    500: ("server_error", "the server failed to answer this request; the error is logged"),
}


class JsonErrorsUnderApi:
    async_capable = True
    sync_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse | Awaitable[HttpResponse]]) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> HttpResponse | Awaitable[HttpResponse]:
        if self.is_async:
            return self.__acall__(request)
        if not request.path.startswith(PREFIX):
            return self.get_response(request)  # type: ignore[return-value]
        refused = refuse_oversized(request)
        if refused is not None:
            return refused
        return as_json(request, self.get_response(request))  # type: ignore[arg-type]

    async def __acall__(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith(PREFIX):
            return await self.get_response(request)  # type: ignore[misc]
        refused = refuse_oversized(request)
        if refused is not None:
            return refused
        return as_json(request, await self.get_response(request))  # type: ignore[misc]

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        """A body found too large while a view read it (one without a Content-Length, or a
        multipart form whose fields outgrew DATA_UPLOAD_MAX_MEMORY_SIZE): 413, not Django's 400."""
        if request.path.startswith(PREFIX) and isinstance(exception, RequestDataTooBig):
            return too_large(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
        return None


def body_limit(request: HttpRequest) -> int | None:
    """Bytes a request's body may have: an upload's file limit plus its framing, or Django's."""
    if request.content_type == "multipart/form-data":
        return settings.ANALYST_MAX_UPLOAD + MULTIPART_ALLOWANCE
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def refuse_oversized(request: HttpRequest) -> JsonResponse | None:
    declared = request.META.get("CONTENT_LENGTH") or "0"
    limit = body_limit(request)
    if limit is not None and declared.isdigit() and int(declared) > limit:
        return too_large(limit)
    return None


def too_large(limit: int | None) -> JsonResponse:

    size = f" of {human_size(limit)}" if limit is not None else ""
    return error_response(413, "request_too_large", f"the request body is larger than the limit{size}")


def as_json(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    """An error response that is not JSON already becomes one of the same status."""
    if response.status_code < 400 or response.get("Content-Type", "").startswith("application/json"):
        return response
    status = response.status_code
    response.close()
    if status == 404:
        code, message = "not_found", f"no such endpoint or object: {request.method} {request.path}"
    else:
        code, message = CODES.get(status, ("server_error" if status >= 500 else "bad_request", "error"))
    answer = error_response(status, code, message)
    if response.has_header("Allow"):
        answer["Allow"] = response["Allow"]
    return answer
