"""The WebSocket origin check: a socket opens only from a page of this very site (its Origin names
the Host the socket was opened to, port included) or from one of CSRF_TRUSTED_ORIGINS.

Channels' AllowedHostsOriginValidator compares the Origin's host with ALLOWED_HOSTS and ignores
the port, so any other app on 127.0.0.1 (another port: another origin to the browser) could open
the live view with the user's cookies. A socket has no CSRF token: the Origin is its only check.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import SplitResult, urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import is_same_domain, split_domain_port, validate_host

DEFAULT_PORTS = {"http": 80, "ws": 80, "https": 443, "wss": 443}


class SameOriginValidator:
    """ASGI middleware for the "websocket" protocol: refuse (403 at the handshake) a socket whose
    Origin is missing, malformed, or another site's."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] != "websocket":
            raise ValueError("SameOriginValidator is for WebSocket connections only")
        headers = {name: value.decode("latin1") for name, value in scope.get("headers", [])}
        if allowed_origin(headers.get(b"origin"), headers.get(b"host")):
            return await self.application(scope, receive, send)
        return await WebsocketDenier()(scope, receive, send)


def allowed_origin(origin: str | None, host: str | None) -> bool:
    parsed = _parsed(origin)
    if parsed is None:
        return False
    return _is_the_host(parsed, host) or any(
        _is_trusted(parsed, trusted) for trusted in settings.CSRF_TRUSTED_ORIGINS
    )


def _parsed(origin: str | None) -> SplitResult | None:
    if not origin:
        return None
    try:
        parsed = urlsplit(origin.strip().lower())
        parsed.port  # noqa: B018 -- raises ValueError for a port that is not a number
    except ValueError:
        return None
    if parsed.scheme not in DEFAULT_PORTS or not parsed.hostname:
        return None
    return parsed


def _port(parsed: SplitResult) -> int:
    return parsed.port or DEFAULT_PORTS[parsed.scheme]


def _is_the_host(origin: SplitResult, host: str | None) -> bool:
    """Whether ``origin`` is the Host header's site (any scheme: a proxy may end TLS), and that
    Host one of ALLOWED_HOSTS (as Django checks every HTTP request's)."""
    if not host:
        return False
    domain, port = split_domain_port(host.lower())
    if not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
        return False
    try:
        host_port = int(port) if port else DEFAULT_PORTS[origin.scheme]
    except ValueError:
        return False
    return domain == origin.hostname and host_port == _port(origin)


def _is_trusted(origin: SplitResult, trusted: str) -> bool:
    """Django's rule for CSRF_TRUSTED_ORIGINS: the same scheme and port, and the same host or, for
    ``https://*.example.com``, one under it."""
    pattern = _parsed(trusted.replace("://*.", "://wildcard."))
    if pattern is None or pattern.scheme != origin.scheme or _port(pattern) != _port(origin):
        return False
    assert pattern.hostname is not None and origin.hostname is not None
    if "://*." in trusted:
        return is_same_domain(origin.hostname, "." + pattern.hostname.removeprefix("wildcard."))
    return origin.hostname == pattern.hostname
