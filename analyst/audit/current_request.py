"""The request being served, remembered for the audit log: a service deep below a view records
who did what from where without every caller passing the request down."""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import HttpRequest, HttpResponse

_current: contextvars.ContextVar[HttpRequest | None] = contextvars.ContextVar("audit_request", default=None)


def current() -> HttpRequest | None:
    """The request this code serves, or None (a worker, a command, MCP over stdio)."""
    return _current.get()


class RememberRequest:
    """Middleware: each request is ``current()`` while it is served (sync or async, the context
    of a sync view run in a thread is a copy of this one)."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse | Awaitable[HttpResponse]]) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> HttpResponse | Awaitable[HttpResponse]:
        if self.is_async:
            return self._serve_async(request)
        token = _current.set(request)
        try:
            return self.get_response(request)  # type: ignore[return-value]
        finally:
            _current.reset(token)

    async def _serve_async(self, request: HttpRequest) -> HttpResponse:
        token = _current.set(request)
        try:
            return await self.get_response(request)  # type: ignore[misc]
        finally:
            _current.reset(token)
