"""The HTTP(S) proxy at 127.0.0.1:17000 inside a sandbox: ``CONNECT host:port`` (a tunnel, for
TLS) and absolute-form plain HTTP (``GET http://host:port/path``), to admitted destinations only.

One request per connection for plain HTTP: it goes on with ``Connection: close``, and whatever
the sandbox sends after it reaches the same admitted destination or nothing. Anything else is
answered 403 (not admitted, or refused by policy.py) or 400 (not a request this proxy takes), with
a one-line reason; 502 when the destination could not be reached.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from sandboxes.server.egress.connection_log import ConnectionLog
from sandboxes.server.egress.listener import Handler, Listener
from sandboxes.server.egress.policy import Policy, Refused
from sandboxes.server.egress.relay import connect, relay

MAX_HEAD = 64 << 10
ESTABLISHED = b"HTTP/1.1 200 Connection established\r\n\r\n"
HEAD_SECONDS = 30.0
HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authorization",
    "proxy-authenticate",
    "te",
    "trailer",
    "upgrade",
    "host",
}
# Whether a destination is admitted: the http endpoint's name, True (the allow list), or False.
Admission = Callable[[str, int], str | bool]


class BadRequest(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass(frozen=True)
class Request:
    method: str
    host: str
    port: int
    head: bytes  # what goes to the destination first ("" for CONNECT)
    rest: bytes  # what the sandbox sent after the head


def proxy(admitted: Admission, policy: Policy, log: ConnectionLog) -> Handler:
    async def serve(inside: socket.socket, listener: Listener) -> None:
        try:
            request = await asyncio.wait_for(read_request(inside), HEAD_SECONDS)
        except (BadRequest, TimeoutError, OSError) as exc:
            if isinstance(exc, BadRequest):
                await answer(inside, exc.status, exc.reason)
            return
        admission = admitted(request.host, request.port)
        name = admission if isinstance(admission, str) else None
        record = log.open(request.host, request.port, name)
        if not admission:
            why = f"{request.host}:{request.port} is not an endpoint of this sandbox"
            record.refuse(why)
            await answer(inside, 403, why)
            return
        try:
            address = await policy.resolve(request.host, request.port)
            outside = await connect(address, request.port)
        except Refused as exc:
            record.refuse(exc.message)
            await answer(inside, 403 if exc.category == "blocked" else 502, exc.message)
            return
        except (OSError, TimeoutError) as exc:
            why = f"could not connect to {request.host}:{request.port}: {exc or 'timed out'}"
            record.refuse(why)
            await answer(inside, 502, why)
            return
        record.made()
        listener.heading_to(request.host, request.port)
        if request.method == "CONNECT":
            await asyncio.get_running_loop().sock_sendall(inside, ESTABLISHED)
        await relay(inside, outside, record, first=request.head + request.rest)

    return serve


async def read_request(inside: socket.socket) -> Request:
    loop = asyncio.get_running_loop()
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) > MAX_HEAD:
            raise BadRequest(400, f"the request's head is longer than {MAX_HEAD} bytes")
        chunk = await loop.sock_recv(inside, MAX_HEAD)
        if not chunk:
            raise OSError("the sandbox closed the connection before its request's end")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return parse(head, rest)


def parse(head: bytes, rest: bytes) -> Request:
    try:
        lines = head.decode("ascii").split("\r\n")
    except UnicodeDecodeError:
        raise BadRequest(400, "the request's head is not ASCII") from None
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequest(400, "not an HTTP/1 request line")
    method, target, version = parts
    headers = check_headers(lines[1:])
    if method == "CONNECT":
        host, port = authority(target, default=None)
        return Request(method, host, port, b"", rest)
    if not target.lower().startswith("http://"):
        raise BadRequest(400, "only CONNECT host:port and absolute http:// requests go through this proxy")
    url = urlsplit(target)
    host, port = authority(url.netloc, default=80)
    path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    named = {
        token.strip().lower()
        for name, value in headers
        if name.lower() == "connection"
        for token in value.split(",")
    }
    kept = [
        f"{name}: {value}"
        for name, value in headers
        if name.lower() not in HOP_BY_HOP and name.lower() not in named
    ]
    shown = f"[{host}]" if ":" in host else host
    lines = [f"{method} {path} {version}", f"Host: {shown}:{port}", *kept, "Connection: close"]
    return Request(method, host, port, ("\r\n".join(lines) + "\r\n\r\n").encode(), rest)


def check_headers(lines: list[str]) -> list[tuple[str, str]]:
    """The headers, refusing what lets two parsers disagree on where a request ends."""
    headers = []
    for line in lines:
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip() or line[:1] in (" ", "\t"):
            raise BadRequest(400, "a malformed header line")
        headers.append((name, value.strip()))
    names = [name.lower() for name, _ in headers]
    if "transfer-encoding" in names and "content-length" in names:
        raise BadRequest(400, "both Transfer-Encoding and Content-Length")
    if names.count("content-length") > 1 or names.count("transfer-encoding") > 1:
        raise BadRequest(400, "a repeated Content-Length or Transfer-Encoding")
    return headers


def authority(text: str, default: int | None) -> tuple[str, int]:
    """(host, port) of ``host:port`` or ``[v6]:port`` (the port may be left out when a default is
    given); no user information."""
    if "@" in text or not text:
        raise BadRequest(400, f"not a host and port: {text!r}")
    if text.startswith("["):
        host, _, tail = text[1:].partition("]")
        port_text = tail[1:] if tail.startswith(":") else ""
    else:
        host, _, port_text = text.partition(":") if text.count(":") == 1 else (text, "", "")
    if not port_text and default is not None:
        return host.lower().rstrip("."), default
    if not (port_text.isascii() and port_text.isdigit()) or not 1 <= int(port_text) <= 65535:
        raise BadRequest(400, f"not a host and port: {text!r}")
    return host.lower().rstrip("."), int(port_text)


async def answer(inside: socket.socket, status: int, reason: str) -> None:
    """A refusal: ``reason`` as the body's one line."""
    words = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}[status]
    body = (reason.replace("\r", " ").replace("\n", " ") + "\n").encode()
    head = (
        f"HTTP/1.1 {status} {words}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    try:
        await asyncio.get_running_loop().sock_sendall(inside, head.encode() + body)
    except OSError:
        pass
