"""The timer in every worker: its heartbeat, and a reconciler pass, every few seconds.

It runs in the worker's main process (not its pool processes, which the OOM killer may take), so
a turn whose pool process died is ended by its own worker, and by any other worker too.
"""

from __future__ import annotations

import logging
import threading

from django.conf import settings
from django.db import connections

from analyst.ops import health
from analyst.turns import reconciler

log = logging.getLogger(__name__)


def start(hostname: str) -> threading.Event:
    """Start the timer; set the returned event to stop it."""
    stopped = threading.Event()
    interval = min(settings.ANALYST_RECONCILE_INTERVAL, settings.ANALYST_WORKER_BEAT)
    thread = threading.Thread(
        target=_run, args=(hostname, interval, stopped), name="worker-watch", daemon=True
    )
    thread.start()
    return stopped


def _run(hostname: str, interval: float, stopped: threading.Event) -> None:
    while True:
        health.beat(hostname)
        try:
            reconciler.reconcile()
        except Exception:  # a database or broker outage: the next pass tries again
            log.exception("reconciler pass failed")
        finally:
            connections.close_all()  # this thread's own connections; a pass is seconds apart
        if stopped.wait(interval):
            return
