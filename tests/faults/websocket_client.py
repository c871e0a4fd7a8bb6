"""A small blocking WebSocket client (RFC 6455 over a plain socket) for tests against a real server:
text frames in and out, pings answered, the close code kept."""

from __future__ import annotations

import base64
import json
import os
import socket
import struct
from typing import Any
from urllib.parse import urlsplit

TEXT, CLOSE, PING, PONG = 0x1, 0x8, 0x9, 0xA


class Closed(Exception):
    def __init__(self, code: int | None) -> None:
        super().__init__(f"the server closed the socket (code {code})")
        self.code = code


class WebSocket:
    def __init__(self, url: str, *, headers: dict[str, str] | None = None, timeout: float = 10) -> None:
        """Open ``url`` (ws://host:port/path?query); raises Closed if the server refuses."""
        parts = urlsplit(url)
        self.sock = socket.create_connection((parts.hostname, parts.port), timeout=timeout)
        self.buffer = b""
        key = base64.b64encode(os.urandom(16)).decode()
        lines = [
            f"GET {parts.path}?{parts.query} HTTP/1.1",
            f"Host: {parts.hostname}:{parts.port}",
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key}",
            "Sec-WebSocket-Version: 13",
            *(f"{name}: {value}" for name, value in (headers or {}).items()),
        ]
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = self._read_until(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 101"):
            self.sock.close()
            raise Closed(None)

    def receive_json(self, timeout: float) -> Any:
        """The next text frame as JSON; raises Closed when the server closes, TimeoutError if none."""
        self.sock.settimeout(timeout)
        try:
            while True:
                opcode, data = self._read_frame()
                if opcode == TEXT:
                    return json.loads(data)
                if opcode == PING:
                    self._send(PONG, data)
                elif opcode == CLOSE:
                    code = struct.unpack("!H", data[:2])[0] if len(data) >= 2 else None
                    self.close()
                    raise Closed(code)
        except TimeoutError:
            raise
        except OSError as error:  # reset: closed without a close frame
            raise Closed(None) from error

    def send_json(self, value: Any) -> None:
        self._send(TEXT, json.dumps(value).encode())

    def close(self) -> None:
        try:
            self._send(CLOSE, struct.pack("!H", 1000))
        except OSError:
            pass
        self.sock.close()

    def _send(self, opcode: int, data: bytes) -> None:
        mask = os.urandom(4)
        length = len(data)
        if length < 126:
            header = struct.pack("!BB", 0x80 | opcode, 0x80 | length)
        elif length < 1 << 16:
            header = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, length)
        else:
            header = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, length)
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _read_frame(self) -> tuple[int, bytes]:
        """One whole message: (opcode, payload), continuation frames joined."""
        opcode, message = None, b""
        while True:
            first, second = self._read(2)
            length = second & 0x7F
            if length == 126:
                (length,) = struct.unpack("!H", self._read(2))
            elif length == 127:
                (length,) = struct.unpack("!Q", self._read(8))
            data = self._read(length)
            if first & 0x0F:
                opcode = first & 0x0F
            message += data
            if first & 0x80:
                return opcode or TEXT, message

    def _read(self, count: int) -> bytes:
        while len(self.buffer) < count:
            self._fill()
        taken, self.buffer = self.buffer[:count], self.buffer[count:]
        return taken

    def _read_until(self, end: bytes) -> bytes:
        while end not in self.buffer:
            self._fill()
        head, _, self.buffer = self.buffer.partition(end)
        return head

    def _fill(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionResetError("the server closed the connection")
        self.buffer += chunk
