"""One request to sandboxd as data (method, path, query, body, timeout) and how its answer is read."""

from __future__ import annotations

from collections.abc import AsyncIterable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import httpx

T = TypeVar("T")


@dataclass(frozen=True)
class Request:
    """What httpx.Client and httpx.AsyncClient are asked to send; a field left None is not sent,
    so an unset ``timeout`` leaves the client's own."""

    method: str
    path: str
    params: dict[str, Any] | None = None
    json: dict[str, Any] | None = None
    headers: dict[str, str] | None = None
    content: bytes | Iterable[bytes] | AsyncIterable[bytes] | None = None
    timeout: httpx.Timeout | None = None

    def options(self) -> dict[str, Any]:
        """The keyword arguments, beside method and path, of httpx's request() and stream()."""
        options = {
            "params": self.params,
            "json": self.json,
            "headers": self.headers,
            "content": self.content,
            "timeout": self.timeout,
        }
        return {name: value for name, value in options.items() if value is not None}


@dataclass(frozen=True)
class Call(Generic[T]):
    """A request whose whole answer is read at once, and the function that reads it."""

    request: Request
    read: Callable[[httpx.Response], T]
