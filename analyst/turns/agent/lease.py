"""A running turn's lease, renewed from a thread so that a long, quiet cell keeps it."""

from __future__ import annotations

import threading
from types import TracebackType

from django.db import connection
from django.utils import timezone

from analyst.models import Turn


class Lease:
    """While open, renews ``turn``'s lease every third of ``seconds``; a dead worker stops renewing."""

    def __init__(self, turn_id: int, seconds: int) -> None:
        self.turn_id = turn_id
        self.seconds = seconds
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._renew_forever, name=f"lease-{turn_id}", daemon=True)

    def __enter__(self) -> Lease:
        self._thread.start()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self._stopped.set()
        self._thread.join()

    def _renew_forever(self) -> None:
        try:
            while not self._stopped.wait(self.seconds / 3):
                expires = timezone.now() + timezone.timedelta(seconds=self.seconds)
                Turn.objects.filter(id=self.turn_id, status=Turn.Status.RUNNING).update(
                    lease_expires_at=expires
                )
        finally:
            connection.close()  # this thread's own database connection
