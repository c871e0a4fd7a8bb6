"""A strict Content-Security-Policy, a Permissions-Policy and nosniff on every response: Django's
(pages, the API, share pages, errors, the admin) through a middleware, and static files, which
are served in front of Django's middleware, through a subclass of their ASGI handler.

A response that already carries one of these headers keeps its own: downloads and artifacts send
``Content-Security-Policy: sandbox; default-src 'none'``, stricter than the page's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.http import HttpRequest, HttpResponseBase

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "PERMISSIONS_POLICY",
    "SecurityHeaders",
    "StaticFilesWithSecurityHeaders",
    "add_security_headers",
]

# What the model writes, a cell's HTML output and a plotly figure are untrusted: nothing in them
# may run script or make the browser fetch another site (a markdown <video poster>, an SVG
# <image>, a figure's layout.images would tell a third party the page was read, and what it
# held in the URL). So: our own scripts only, never inline ones, and no third-party fetches.
_DIRECTIVES = {
    "default-src": "'self'",
    "script-src": "'self'",
    # plotly.js writes its stylesheet into <style> elements it adds to the page (and style
    # attributes in some traces: colorbars, images). Under style-src 'self' Chromium blocks them
    # and the chart is drawn without its stylesheet (its toolbar loses its place), so inline
    # styles are allowed. A style runs no script, and whatever it could fetch (url(), @import,
    # fonts) is still held to this site by img-src, font-src and default-src.
    "style-src": "'self' 'unsafe-inline'",
    "img-src": "'self' data: blob:",
    "media-src": "'self' data: blob:",
    "font-src": "'self' data: blob:",
    # 'self' covers ws: and wss: to this host and port (CSP3; Chromium since 71, Safari since 16),
    # so the live view's WebSocket needs no source of its own (tests/e2e/test_csp.py).
    "connect-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'none'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}
CONTENT_SECURITY_POLICY = "; ".join(f"{name} {value}" for name, value in _DIRECTIVES.items())

# Powerful features no page of ours uses, off for us and for anything we might ever frame.
# Only features Chromium knows (document.featurePolicy.features() in Chromium 156): an unknown
# one is an error in the console on every page (so no "bluetooth", which it does not list).
_FEATURES_OFF = (
    "accelerometer",
    "autoplay",
    "browsing-topics",
    "camera",
    "clipboard-read",
    "display-capture",
    "encrypted-media",
    "gamepad",
    "geolocation",
    "gyroscope",
    "hid",
    "identity-credentials-get",
    "idle-detection",
    "local-fonts",
    "magnetometer",
    "microphone",
    "midi",
    "otp-credentials",
    "payment",
    "publickey-credentials-create",
    "publickey-credentials-get",
    "screen-wake-lock",
    "serial",
    "usb",
    "window-management",
    "xr-spatial-tracking",
)
PERMISSIONS_POLICY = ", ".join(f"{feature}=()" for feature in _FEATURES_OFF)

_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "Permissions-Policy": PERMISSIONS_POLICY,
    "X-Content-Type-Options": "nosniff",
}


def add_security_headers(response: HttpResponseBase) -> HttpResponseBase:
    """Set each header the response does not set itself, and return it."""
    for name, value in _HEADERS.items():
        response.headers.setdefault(name, value)
    return response


class SecurityHeaders:
    """The middleware: outermost but for SecurityMiddleware, so error pages carry the headers too."""

    async_capable = True
    sync_capable = True

    def __init__(
        self, get_response: Callable[[HttpRequest], HttpResponseBase | Awaitable[HttpResponseBase]]
    ) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> HttpResponseBase | Awaitable[HttpResponseBase]:
        if self.is_async:
            return self.__acall__(request)
        return add_security_headers(self.get_response(request))  # type: ignore[arg-type]

    async def __acall__(self, request: HttpRequest) -> HttpResponseBase:
        return add_security_headers(await self.get_response(request))  # type: ignore[misc]


class StaticFilesWithSecurityHeaders(ASGIStaticFilesHandler):
    """Django's static file handler (it answers before any middleware runs), with our headers:
    nosniff above all, so a vendored script or stylesheet is never read as another type."""

    async def get_response_async(self, request: HttpRequest) -> HttpResponseBase:
        return add_security_headers(await super().get_response_async(request))
