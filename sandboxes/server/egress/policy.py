"""Where sandboxd connects for a sandbox: every name resolved on our side, every address checked.

Whatever name led to it, an address that is link-local (the cloud's metadata service lives at
169.254.169.254), multicast, unspecified or reserved is refused, and a loopback one unless the
operator allows loopback (a database on this machine, in development); sandboxd's own API port
always. The check is made on the resolved address, right before connecting to that address.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")  # connecting to 0.x.x.x reaches this host
# Metadata services outside link-local: AWS's IPv6 one, Alibaba's.
METADATA = {ipaddress.ip_address("fd00:ec2::254"), ipaddress.ip_address("100.100.100.200")}


class Refused(Exception):
    """A destination sandboxd will not connect to; ``category`` is one of dns, blocked, refused,
    timeout, unreachable (the reachability check's words)."""

    def __init__(self, category: str, message: str) -> None:
        super().__init__(message)
        self.category = category
        self.message = message


@dataclass(frozen=True)
class Policy:
    loopback: bool = False  # SANDBOXD_EGRESS_LOOPBACK
    allow: tuple[tuple[str, int | None], ...] = ()  # SANDBOXD_EGRESS_ALLOW: (host, port or any)
    own: tuple[str, int] | None = None  # sandboxd's own API (host, port): never a destination

    @classmethod
    def from_settings(cls, allow: Iterable[str], *, loopback: bool, own: tuple[str, int] | None) -> Policy:
        return cls(loopback=loopback, allow=tuple(parse_allowed(entry) for entry in allow), own=own)

    def allow_listed(self, host: str, port: int) -> bool:
        return any(host == allowed and wanted in (None, port) for allowed, wanted in self.allow)

    def blocked_reason(self, address: str, port: int) -> str | None:
        """Why sandboxd will not connect to ``address``:``port``, or None when it may."""
        ip: Address = ipaddress.ip_address(address.partition("%")[0])
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        if ip.is_link_local or ip in METADATA:
            return f"{ip} is link-local or a cloud metadata address"
        if ip.is_multicast:
            return f"{ip} is a multicast address"
        if ip.is_unspecified or ip in THIS_NETWORK:
            return f"{ip} is an unspecified address"
        if ip.is_loopback:
            if not self.loopback:
                return f"{ip} is a loopback address of sandboxd's host"
        elif ip.is_reserved:
            return f"{ip} is a reserved address"
        if self.own is not None and port == self.own[1] and (ip.is_loopback or str(ip) == self.own[0]):
            return "that is the sandbox service's own port"
        return None

    async def resolve(self, host: str, port: int) -> str:
        """The first address of ``host`` sandboxd may connect to. Raises Refused ("dns" when the
        name does not resolve, "blocked" when each of its addresses is refused)."""
        loop = asyncio.get_running_loop()
        try:
            found = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError) as exc:
            raise Refused("dns", f"the name {host} does not resolve ({exc})") from None
        reasons = []
        for *_, sockaddr in found:
            reason = self.blocked_reason(str(sockaddr[0]), port)
            if reason is None:
                return str(sockaddr[0])
            reasons.append(reason)
        raise Refused("blocked", f"{host}:{port} is refused: {reasons[0] if reasons else 'no address'}")


def parse_allowed(entry: str) -> tuple[str, int | None]:
    """An allow-list entry, "host" (any port) or "host:port" ("[v6]:port" for an IPv6 address)."""
    entry = entry.strip().lower()
    if entry.startswith("["):
        host, _, rest = entry[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") else None
    host, colon, port = entry.rpartition(":")
    if colon and port.isdigit() and ":" not in host:
        return host, int(port)
    return entry, None
