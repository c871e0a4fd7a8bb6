"""A value made on first use in each process: Celery's prefork pool forks after import, and a
client, connection or event-loop thread must not be shared across a fork."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class PerProcess(Generic[T]):
    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._lock = threading.Lock()
        self._pid = -1
        self._value: T | None = None

    def get(self) -> T:
        with self._lock:
            if self._pid != os.getpid():
                self._value, self._pid = self._make(), os.getpid()
            return self._value  # type: ignore[return-value]
