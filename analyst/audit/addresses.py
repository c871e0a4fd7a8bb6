"""The client's address as the audit log keeps it."""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.http import HttpRequest


def client_address(request: HttpRequest | None) -> str | None:
    """REMOTE_ADDR, or, behind a proxy of ours (ANALYST_TRUSTED_PROXY_HEADER, as the login
    throttle reads it), the header's last entry: the one that proxy added, where earlier ones are
    the client's to forge. None when unknown or not an IP address."""
    if request is None:
        return None
    raw = request.META.get("REMOTE_ADDR") or ""
    header = settings.ANALYST_TRUSTED_PROXY_HEADER
    if header:
        forwarded = request.META.get("HTTP_" + header.upper().replace("-", "_"), "")
        entries = [entry.strip() for entry in forwarded.split(",") if entry.strip()]
        if entries:
            raw = entries[-1]
    try:
        address = ipaddress.ip_address(raw)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return str(address.ipv4_mapped)
    return str(address)
