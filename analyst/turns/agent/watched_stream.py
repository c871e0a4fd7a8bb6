"""A blocking stream read in a thread of its own, so the reader's thread can give up on it.

A model that hangs keeps its HTTP read blocked for up to its timeout; a Stop must not wait that
long. The producer runs in a daemon thread and hands items over a queue; while none arrive,
``check`` is called every ``poll`` seconds and may raise (a cancelled turn) to end the wait at
once. The abandoned thread notices at its next item, or when its blocked read times out, and
closes its stream then.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from typing import TypeVar

T = TypeVar("T")
Put = Callable[[T], None]


class _Abandoned(Exception):
    """Raised inside the producer once nobody reads its items any more."""


class _End:
    def __init__(self, error: BaseException | None) -> None:
        self.error = error


def watched(produce: Callable[[Put[T]], None], *, check: Callable[[], None], poll: float) -> Iterator[T]:
    """The items ``produce(put)`` puts, as they come; its exception is raised here.

    ``check`` runs in this thread whenever ``poll`` seconds pass with no item; what it raises
    ends the iteration (and abandons the producer). Closing the iterator abandons it too.
    """
    items: queue.SimpleQueue[T | _End] = queue.SimpleQueue()
    abandoned = threading.Event()

    def put(item: T) -> None:
        if abandoned.is_set():
            raise _Abandoned
        items.put(item)

    def run() -> None:
        try:
            produce(put)
        except _Abandoned:
            return
        except BaseException as exc:  # handed to the reader, who raises it
            items.put(_End(exc))
        else:
            items.put(_End(None))

    threading.Thread(target=run, name="watched-stream", daemon=True).start()
    try:
        while True:
            try:
                item = items.get(timeout=poll)
            except queue.Empty:
                check()
                continue
            if isinstance(item, _End):
                if item.error is not None:
                    raise item.error
                return
            yield item
    finally:
        abandoned.set()
