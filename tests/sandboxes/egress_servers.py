"""Real servers on loopback for the egress tests (a TCP echo server and an HTTP server, each on
a free port of 127.0.0.1, in threads, recording what they were sent), and the cells that call them."""

from __future__ import annotations

import contextlib
import http.server
import socketserver
import threading
from collections.abc import Iterator

from sandboxes import Sandbox


def run(sandbox: Sandbox, code: str) -> str:
    execution = sandbox.run_code(code, timeout=60)
    assert execution.error is None, execution.error
    return execution.stdout


def exchange(port: int, message: str) -> str:
    """A cell that sends ``message`` to 127.0.0.1:``port`` inside the sandbox and prints the answer."""
    return (
        "import socket\n"
        f"s = socket.create_connection(('127.0.0.1', {port}), timeout=10)\n"
        f"s.sendall({message.encode()!r}); s.shutdown(socket.SHUT_WR)\n"
        "got = b''\n"
        "while chunk := s.recv(65536):\n"
        "    got += chunk\n"
        "print(got.decode())\n"
    )


class _EchoHandler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        while data := self.request.recv(65536):
            self.request.sendall(self.server.prefix + data)  # type: ignore[attr-defined]


class _EchoServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    prefix = b""


class _HttpHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802
        self.server.requests.append((self.path, dict(self.headers)))  # type: ignore[attr-defined]
        body = f"hello from {self.server.server_address[1]}{self.path}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class _HttpServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    requests: list[tuple[str, dict[str, str]]]


@contextlib.contextmanager
def echo_server(prefix: bytes = b"") -> Iterator[int]:
    """The port of a TCP server on 127.0.0.1 that sends back ``prefix`` + whatever it receives."""
    server = _EchoServer(("127.0.0.1", 0), _EchoHandler)
    server.prefix = prefix
    with _running(server):
        yield server.server_address[1]


@contextlib.contextmanager
def http_server() -> Iterator[_HttpServer]:
    """An HTTP server on 127.0.0.1 answering GET with "hello from <port><path>"; ``.requests``."""
    server = _HttpServer(("127.0.0.1", 0), _HttpHandler)
    server.requests = []
    with _running(server):
        yield server


@contextlib.contextmanager
def _running(server: socketserver.BaseServer) -> Iterator[None]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
