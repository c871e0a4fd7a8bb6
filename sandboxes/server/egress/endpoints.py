"""What a sandbox's egress may be: its endpoints (checked as sent) and the ports they get inside."""

from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import dataclass, field
from typing import Any

from sandboxes.errors import InvalidRequest

PROXY_PORT = 17000
FIRST_TCP_PORT = 17001
MAX_ENDPOINTS = 32
MAX_CONFIG_BYTES = 1 << 20
MODES = ("tcp", "http")
NAME = re.compile(r"[a-z][a-z0-9_]{0,62}")
LABEL = r"[A-Za-z0-9_][A-Za-z0-9_-]{0,62}"
HOST_NAME = re.compile(rf"(?=.{{1,253}}$){LABEL}(\.{LABEL})*\.?")


@dataclass(frozen=True)
class Endpoint:
    name: str
    host: str  # a DNS name or an IP address, resolved by sandboxd when connecting
    port: int
    mode: str  # "tcp": a port of its own inside; "http": admitted by the proxy

    def info(self) -> dict[str, object]:
        return {"name": self.name, "host": self.host, "port": self.port, "mode": self.mode}


@dataclass(frozen=True)
class EgressSpec:
    endpoints: tuple[Endpoint, ...] = ()
    config: dict[str, Any] = field(default_factory=dict)
    proxied: bool = False  # whether the proxy listens: http endpoints, or an operator's allow list

    @property
    def ports(self) -> dict[str, int]:
        """Each tcp endpoint's port inside the sandbox, in the order given."""
        tcp = [endpoint.name for endpoint in self.endpoints if endpoint.mode == "tcp"]
        return {name: FIRST_TCP_PORT + index for index, name in enumerate(tcp)}

    @property
    def proxy(self) -> str | None:
        return f"http://127.0.0.1:{PROXY_PORT}" if self.proxied else None

    def answer(self) -> dict[str, object]:
        """The PUT's answer, also what egress.json holds beside ``config``."""
        return {"proxy": self.proxy, "ports": self.ports}

    def endpoint(self, name: str) -> Endpoint | None:
        return next((endpoint for endpoint in self.endpoints if endpoint.name == name), None)


def check_spec(body: dict[str, Any], *, allow_list: bool) -> EgressSpec:
    """The egress a PUT body asks for; InvalidRequest, saying what is wrong, otherwise.
    ``allow_list``: the operator allow-listed hosts for every sandbox (the proxy then listens)."""
    raw = body.get("endpoints", [])
    if not isinstance(raw, list):
        raise InvalidRequest("endpoints must be a list")
    if len(raw) > MAX_ENDPOINTS:
        raise InvalidRequest(f"at most {MAX_ENDPOINTS} endpoints")
    endpoints = tuple(check_endpoint(item) for item in raw)
    names = [endpoint.name for endpoint in endpoints]
    if len(set(names)) != len(names):
        raise InvalidRequest("endpoint names must be unique")
    config = body.get("config", {})
    if not isinstance(config, dict):
        raise InvalidRequest("config must be a JSON object")
    if len(json.dumps(config)) > MAX_CONFIG_BYTES:
        raise InvalidRequest(f"config may be at most {MAX_CONFIG_BYTES} bytes of JSON")
    proxied = allow_list or any(endpoint.mode == "http" for endpoint in endpoints)
    return EgressSpec(endpoints, config, proxied)


def check_endpoint(item: object) -> Endpoint:
    if not isinstance(item, dict):
        raise InvalidRequest("each endpoint must be an object with name, host, port and mode")
    name, host, port, mode = (item.get(key) for key in ("name", "host", "port", "mode"))
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise InvalidRequest(f"endpoint name {name!r} must match ^[a-z][a-z0-9_]{{0,62}}$")
    if not isinstance(host, str) or not valid_host(host):
        raise InvalidRequest(f"endpoint {name}: host {host!r} is not a host name or an IP address")
    if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
        raise InvalidRequest(f"endpoint {name}: port must be a whole number from 1 to 65535")
    if mode not in MODES:
        raise InvalidRequest(f"endpoint {name}: mode must be one of {', '.join(MODES)}")
    return Endpoint(name, host.lower().rstrip("."), port, mode)


def valid_host(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return bool(HOST_NAME.fullmatch(host))
    return True
