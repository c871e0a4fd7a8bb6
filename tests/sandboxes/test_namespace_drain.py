"""The namespace drain reads every byte a kernel wrote before its save cell ended, however the
reader's thread is scheduled: a kernel that opens, writes and closes the pipe while the reader
waits on an empty pipe, and ends its cell before the reader wakes, still arrives whole. (On a
loaded machine that interleaving lost a small namespace: "state did not arrive whole".)"""

import os
import threading

from sandboxes.server.snapshots import drain


class KernelWritesWhileTheReaderWaits(threading.Event):
    """The stop event: the reader's first wait on the empty pipe is where the kernel opens it,
    writes its namespace, closes it and ends its cell (which sets stop) before the reader wakes."""

    def __init__(self, fifo: str, data: bytes) -> None:
        super().__init__()
        self.fifo, self.data = fifo, data

    def wait(self, timeout: float | None = None) -> bool:
        if not self.is_set():
            with open(self.fifo, "wb") as kernel:
                kernel.write(self.data)
            self.set()
        return super().wait(timeout)


def test_bytes_written_before_the_stop_are_all_read(tmp_path):
    fifo = str(tmp_path / "state")
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # as sandboxd opens it: before the kernel
    data = b"a pickled namespace " * 50
    received = bytearray()
    drain.drain(fd, received.extend, KernelWritesWhileTheReaderWaits(fifo, data))
    assert bytes(received) == data


def test_a_stop_with_nothing_written_ends_the_drain(tmp_path):
    fifo = str(tmp_path / "state")
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    stop = threading.Event()
    stop.set()
    received = bytearray()
    drain.drain(fd, received.extend, stop)
    assert received == b""
