"""Which address a request came from: REMOTE_ADDR, or, behind a proxy of ours
(ANALYST_TRUSTED_PROXY_HEADER), that header's last entry: the one that proxy added, where earlier
entries are the client's to forge. For the login throttle and the audit log alike."""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.http import HttpRequest


def forwarded_for(request: HttpRequest) -> str:
    """The address as the request gives it, not checked ("" when unknown)."""
    raw = request.META.get("REMOTE_ADDR") or ""
    header = settings.ANALYST_TRUSTED_PROXY_HEADER
    if header:
        forwarded = request.META.get("HTTP_" + header.upper().replace("-", "_"), "")
        entries = [entry.strip() for entry in forwarded.split(",") if entry.strip()]
        if entries:
            raw = entries[-1]
    return raw


def as_ip(raw: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """``raw`` as an IP address (an IPv4-mapped IPv6 one as its IPv4), or None when it is none."""
    try:
        address = ipaddress.ip_address(raw)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped
    return address
