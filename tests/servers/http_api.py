"""A local HTTP API that answers JSON to requests bearing its token, and 401 to any other."""

from __future__ import annotations

import contextlib
import json
import secrets
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ORDERS = [{"id": 1, "customer": "ada", "amount": 12.5}, {"id": 2, "customer": "grace", "amount": 7.25}]


@dataclass
class HttpApi:
    url: str
    token: str
    # (method, path, Authorization header or None) of every request received, in order
    received: list[tuple[str, str, str | None]] = field(default_factory=list)


@contextlib.contextmanager
def http_api() -> Iterator[HttpApi]:
    """The API on a free loopback port: GET /orders (and GET /orders/<id>) with
    ``Authorization: Bearer <token>``; 401 without it, 404 for anything else."""
    api = HttpApi(url="", token=f"api-token-{secrets.token_hex(8)}")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(api))
    api.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield api
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _handler(api: HttpApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            authorization = self.headers.get("Authorization")
            api.received.append(("GET", self.path, authorization))
            if authorization != f"Bearer {api.token}":
                self._answer(401, {"error": "a bearer token is required"}, {"WWW-Authenticate": "Bearer"})
            elif self.path == "/orders":
                self._answer(200, {"orders": ORDERS})
            elif self.path.startswith("/orders/") and self.path[8:] in {str(o["id"]) for o in ORDERS}:
                self._answer(200, next(o for o in ORDERS if str(o["id"]) == self.path[8:]))
            else:
                self._answer(404, {"error": f"no such resource: {self.path}"})

        def _answer(self, status: int, body: object, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the base's name)
            pass

    return Handler
