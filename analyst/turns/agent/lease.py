"""A running turn's lease, renewed from a thread so that a long, quiet cell keeps it; the same
thread hears Stop while a cell runs."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType

from django.db import connection
from django.utils import timezone

from analyst.models import Turn

CANCEL_CHECK_SECONDS = 1.0
CANCEL_AGAIN_SECONDS = 5.0  # on_cancel comes this long after Stop is first seen, and as long after that


class Lease:
    """While open, renews ``turn``'s lease every third of ``seconds`` (a dead worker stops
    renewing), and calls ``on_cancel`` in a thread of its own while the turn runs on after it was
    asked to stop: Stop interrupts the session's kernel from the web process, which misses a
    cell that starts just after (a new session's first cell, whose kernel did not exist yet)."""

    def __init__(self, turn_id: int, seconds: int, *, on_cancel: Callable[[], object] | None = None) -> None:
        self.turn_id = turn_id
        self.seconds = seconds
        self.on_cancel = on_cancel
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._renew_forever, name=f"lease-{turn_id}", daemon=True)
        self._cancelling: threading.Thread | None = None
        self._cancelled_at = 0.0

    def __enter__(self) -> Lease:
        self._thread.start()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self._stopped.set()
        self._thread.join()

    def _renew_forever(self) -> None:
        tick = min(self.seconds / 3, CANCEL_CHECK_SECONDS)
        ticks_per_renewal = max(1, round(self.seconds / 3 / tick))  # counted: a clock would drift
        ticks = 0
        try:
            while not self._stopped.wait(tick):
                ticks += 1
                if ticks % ticks_per_renewal == 0:
                    expires = timezone.now() + timezone.timedelta(seconds=self.seconds)
                    Turn.objects.filter(id=self.turn_id, status=Turn.Status.RUNNING).update(
                        lease_expires_at=expires
                    )
                if self.on_cancel is not None and self._asked_to_stop():
                    self._cancel()
        finally:
            connection.close()  # this thread's own database connection

    def _asked_to_stop(self) -> bool:
        return Turn.objects.filter(id=self.turn_id, cancel_requested=True).exists()

    def _cancel(self) -> None:
        """Call on_cancel CANCEL_AGAIN_SECONDS after the stop was first seen (the web process's
        own interrupt is under way meanwhile), then as often while the turn runs on."""
        if not self._cancelled_at:
            self._cancelled_at = time.monotonic()
        busy = self._cancelling is not None and self._cancelling.is_alive()
        if busy or time.monotonic() - self._cancelled_at < CANCEL_AGAIN_SECONDS:
            return
        self._cancelled_at = time.monotonic()
        name = f"stop-{self.turn_id}"
        self._cancelling = threading.Thread(target=self._call_on_cancel, name=name, daemon=True)
        self._cancelling.start()

    def _call_on_cancel(self) -> None:
        assert self.on_cancel is not None
        try:
            self.on_cancel()
        finally:
            connection.close()
