"""A member's WebSocket on a session, as the page opens it (?collab=1), and reading its frames."""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from config.asgi import application

HEADERS = [(b"origin", b"http://127.0.0.1:8000"), (b"host", b"127.0.0.1:8000")]


def cookie_for(user: Any) -> bytes:
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


async def open_socket(path: str, user: Any = None, *, collab: bool = True) -> WebsocketCommunicator:
    headers = list(HEADERS)
    if user is not None:
        headers.append((b"cookie", await sync_to_async(cookie_for)(user)))
    query = "?after=0&collab=1" if collab else "?after=0"
    communicator = WebsocketCommunicator(application, f"{path}{query}", headers)
    connected, code = await communicator.connect()
    assert connected, code
    return communicator


async def member_socket(session: Any, user: Any, **kwargs: Any) -> WebsocketCommunicator:
    return await open_socket(f"/ws/sessions/{session.id}/", user, **kwargs)


async def next_of(communicator: WebsocketCommunicator, type: str, timeout: float = 5) -> dict[str, Any]:
    """The next frame of ``type``, passing over the others (events, heartbeats)."""
    while (frame := await communicator.receive_json_from(timeout=timeout))["type"] != type:
        pass
    return frame


async def each_of(communicator: WebsocketCommunicator, *types: str, timeout: float = 5) -> dict[str, Any]:
    """The next frame of each of ``types``, whatever order they come in (each group's messages
    are ordered, not one group's with another's), passing over the others."""
    found: dict[str, Any] = {}
    while set(found) != set(types):
        frame = await communicator.receive_json_from(timeout=timeout)
        if frame["type"] in types:
            found.setdefault(frame["type"], frame)
    return found


async def closed_with(communicator: WebsocketCommunicator, timeout: float = 5) -> int:
    """The close code the server ends the socket with (passing over the frames before it); the
    socket is done with after it."""
    while (output := await communicator.receive_output(timeout=timeout))["type"] == "websocket.send":
        pass
    assert output["type"] == "websocket.close", output
    await communicator.disconnect()  # as the server would: the consumer ends, off the layer
    return output["code"]
