"""An ASGI app that reads a request's body and throws it away, answering its length: the upload
benchmark serves it with the web server's own flags to measure the floor of any HTTP upload
(the server alone, no Django, no disk, no sandbox)."""

from __future__ import annotations

from typing import Any


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    received = 0
    while True:
        message = await receive()
        received += len(message.get("body", b""))
        if not message.get("more_body"):
            break
    body = str(received).encode()
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"%d" % len(body))]}
    )
    await send({"type": "http.response.body", "body": body})
