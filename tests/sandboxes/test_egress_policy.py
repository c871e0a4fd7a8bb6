"""Where sandboxd connects for a sandbox, decided on the resolved address, and what the proxy
and a PUT accept: plain functions, no packet sent. Names resolve through a scripted resolver
here (the event loop's getaddrinfo replaced), so not even a DNS query leaves the machine.

No address past loopback is named here, not even one to be refused: each kind the policy refuses
is taken from the standard library's own definition of it (ipaddress's networks for link-local,
multicast, reserved and unspecified addresses) and the cloud metadata addresses from the policy's
own list, so the test says "every kind Python knows as link-local is refused" without a literal
address that a broken sandbox could ever be pointed at."""

from __future__ import annotations

import asyncio
import ipaddress
import socket

import pytest

from sandboxes.errors import InvalidRequest
from sandboxes.server.egress.endpoints import check_spec
from sandboxes.server.egress.policy import METADATA, THIS_NETWORK, Policy, Refused, parse_allowed
from sandboxes.server.egress.proxy import BadRequest, parse

STRICT = Policy(loopback=False, own=("127.0.0.1", 8787))
LOOPBACK = Policy(loopback=True, own=("127.0.0.1", 8787))
V4, V6 = ipaddress._IPv4Constants, ipaddress._IPv6Constants  # the standard library's special networks
# One address of each kind the policy refuses whatever the settings, derived, never written out.
REFUSED = {
    "IPv4 link-local (the metadata service's network)": V4._linklocal_network[1],
    "IPv6 link-local": V6._linklocal_network[1],
    "IPv4 multicast": V4._multicast_network[1],
    "IPv6 multicast": V6._multicast_network[1],
    "IPv4 reserved": V4._reserved_network[1],
    "IPv4 unspecified": V4._unspecified_address,
    "IPv6 unspecified": ipaddress.IPv6Address(0),
    "IPv4 this network": THIS_NETWORK[1],
    **{f"metadata {n}": address for n, address in enumerate(sorted(METADATA, key=str))},
}


@pytest.mark.parametrize("address", list(REFUSED.values()), ids=list(REFUSED))
def test_addresses_refused_whatever_the_settings(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> None:
    assert STRICT.blocked_reason(str(address), 80)
    assert LOOPBACK.blocked_reason(str(address), 80)
    if address.version == 4:  # the same address written as IPv4-mapped IPv6
        mapped = ipaddress.IPv6Address(f"::ffff:{address}")
        assert STRICT.blocked_reason(str(mapped), 80) and LOOPBACK.blocked_reason(str(mapped), 80)


def test_loopback_only_when_the_operator_allows_it_and_never_sandboxds_own_port() -> None:
    for address in ("127.0.0.1", "127.5.5.5", "::1", "::ffff:127.0.0.1"):
        assert "loopback" in (STRICT.blocked_reason(address, 5432) or "")
        assert LOOPBACK.blocked_reason(address, 5432) is None
    assert "own port" in (LOOPBACK.blocked_reason("127.0.0.1", 8787) or "")
    assert "own port" in (LOOPBACK.blocked_reason("::1", 8787) or "")


# What the scripted resolver answers; any other name does not resolve.
RESOLVED = {
    "metadata.attacker.test": [str(V4._linklocal_network[-2])],
    "localhost": ["::1", "127.0.0.1"],
    "db.test": [str(V4._linklocal_network[1]), "127.0.0.2"],
}


@pytest.fixture
def scripted_resolver(monkeypatch: pytest.MonkeyPatch) -> None:
    async def getaddrinfo(self, host, port, *args, **kwargs):  # noqa: ANN001, ANN202
        if host not in RESOLVED:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port)) for address in RESOLVED[host]]

    monkeypatch.setattr(asyncio.base_events.BaseEventLoop, "getaddrinfo", getaddrinfo)


def test_a_name_is_resolved_and_each_address_checked_before_any_connection(scripted_resolver: None) -> None:
    with pytest.raises(Refused) as refused:
        asyncio.run(LOOPBACK.resolve("metadata.attacker.test", 80))
    assert refused.value.category == "blocked"
    with pytest.raises(Refused) as refused:
        asyncio.run(STRICT.resolve("localhost", 5432))
    assert refused.value.category == "blocked"
    assert asyncio.run(LOOPBACK.resolve("localhost", 5432)) == "::1"
    assert asyncio.run(LOOPBACK.resolve("db.test", 5432)) == "127.0.0.2"  # the first it may reach
    with pytest.raises(Refused) as refused:
        asyncio.run(STRICT.resolve("no-such-host.invalid", 80))
    assert refused.value.category == "dns"


def test_the_allow_list() -> None:
    assert parse_allowed("pypi.mirror.test") == ("pypi.mirror.test", None)
    assert parse_allowed("Mirror:8080") == ("mirror", 8080)
    assert parse_allowed("[::1]:443") == ("::1", 443)
    policy = Policy.from_settings(["mirror", "api:443"], loopback=False, own=None)
    assert policy.allow_listed("mirror", 8080) and policy.allow_listed("api", 443)
    assert not policy.allow_listed("api", 80) and not policy.allow_listed("other", 443)


def test_the_proxy_forwards_one_clean_request() -> None:
    head = (
        b"GET http://API.test:8080/v1/x?y=1 HTTP/1.1\r\nHost: evil\r\nProxy-Connection: keep-alive"
        b"\r\nConnection: keep-alive, X-Drop\r\nX-Drop: 1\r\nAccept: */*"
    )
    request = parse(head, b"")
    assert (request.method, request.host, request.port) == ("GET", "api.test", 8080)
    assert request.head == (
        b"GET /v1/x?y=1 HTTP/1.1\r\nHost: api.test:8080\r\nAccept: */*\r\nConnection: close\r\n\r\n"
    )
    connect = parse(b"CONNECT db.test:443 HTTP/1.1\r\nHost: db.test:443", b"early")
    assert (connect.host, connect.port, connect.head, connect.rest) == ("db.test", 443, b"", b"early")


@pytest.mark.parametrize(
    "head",
    [
        b"GET /relative HTTP/1.1\r\nHost: x",
        b"GET https://x/ HTTP/1.1",
        b"GET ftp://x/ HTTP/1.1",
        b"CONNECT x HTTP/1.1",
        b"CONNECT x:0 HTTP/1.1",
        b"CONNECT user@x:443 HTTP/1.1",
        b"GET http://x/ HTTP/2",
        b"POST http://x/ HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked",
        b"POST http://x/ HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4",
        b"GET http://x/ HTTP/1.1\r\nA: b\r\n folded",
        b"GET http://x/ HTTP/1.1\r\nBad : header",
        "GET http://x/\u00e9 HTTP/1.1".encode(),
    ],
)
def test_the_proxy_refuses_what_it_does_not_take(head: bytes) -> None:
    with pytest.raises(BadRequest):
        parse(head, b"")


@pytest.mark.parametrize(
    "body",
    [
        {"endpoints": {}},
        {"endpoints": [{"name": "Bad", "host": "h", "port": 1, "mode": "tcp"}]},
        {"endpoints": [{"name": "a" * 64, "host": "h", "port": 1, "mode": "tcp"}]},
        {"endpoints": [{"name": "a", "host": "h", "port": 0, "mode": "tcp"}]},
        {"endpoints": [{"name": "a", "host": "h", "port": 65536, "mode": "tcp"}]},
        {"endpoints": [{"name": "a", "host": "h", "port": True, "mode": "tcp"}]},
        {"endpoints": [{"name": "a", "host": "h", "port": "5432", "mode": "tcp"}]},
        {"endpoints": [{"name": "a", "host": "h k", "port": 1, "mode": "tcp"}]},
        {"endpoints": [{"name": "a", "host": "", "port": 1, "mode": "tcp"}]},
        {"endpoints": [{"name": "a", "host": "h", "port": 1, "mode": "udp"}]},
        {"endpoints": [{"name": "a", "host": "h", "port": 1, "mode": "tcp"}] * 2},
        {"endpoints": [{"name": f"e{i}", "host": "h", "port": 1, "mode": "tcp"} for i in range(33)]},
        {"endpoints": [], "config": []},
    ],
)
def test_a_put_asking_for_what_is_not_allowed_is_invalid(body: dict[str, object]) -> None:
    with pytest.raises(InvalidRequest):
        check_spec(body, allow_list=False)


def test_ports_in_the_order_given_and_the_proxy_when_needed() -> None:
    endpoints = [
        {"name": "a", "host": "db.test", "port": 5432, "mode": "tcp"},
        {"name": "web", "host": "api.test", "port": 443, "mode": "http"},
        {"name": "b", "host": "127.0.0.2", "port": 3306, "mode": "tcp"},
    ]
    spec = check_spec({"endpoints": endpoints}, allow_list=False)
    assert spec.answer() == {"proxy": "http://127.0.0.1:17000", "ports": {"a": 17001, "b": 17002}}
    assert check_spec({"endpoints": endpoints[:1]}, allow_list=False).proxy is None
    assert check_spec({"endpoints": []}, allow_list=True).proxy == "http://127.0.0.1:17000"
