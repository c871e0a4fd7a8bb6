"""The client's address as the audit log keeps it."""

from __future__ import annotations

from django.http import HttpRequest

from analyst.lib.client_address import as_ip, forwarded_for


def client_address(request: HttpRequest | None) -> str | None:
    """The request's address (analyst/lib/client_address.py, as the login throttle reads it);
    None when unknown or not an IP address."""
    address = None if request is None else as_ip(forwarded_for(request))
    return None if address is None else str(address)
