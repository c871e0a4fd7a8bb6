"""sandboxd's kernel launcher (copied to each kernel's runtime folder and run in place of
``python -m ipykernel_launcher``): ipykernel's own, after bounding what a kernel holds for sandboxd.

- stdout and stderr go out in messages of at most about a MiB of text, so a cell that prints a
  lot quickly (ipykernel gathers 0.2 s of output into one message) is cut by sandboxd's output
  cap rather than dropped whole as a message over its size limit;
- the publisher keeps at most ``PUBLISHER_QUEUE`` messages for sandboxd, which reads it only
  while a cell runs: ZeroMQ's default of 1,000 let a thread that publishes MiB messages between
  cells grow its kernel to the memory limit in seconds. The limit is set before the socket binds,
  so every connection gets it; set on a connected socket, ZeroMQ hands the change to the
  connection's other end in its I/O thread, which raced with that end's own work and crashed
  the kernel (SIGSEGV in libzmq, about one kernel in five beside busy processes of its own).
"""

import sys

import zmq
from ipykernel.iostream import OutStream
from ipykernel.kernelapp import IPKernelApp, launch_new_instance

MESSAGE_TEXT = 1 << 20
PUBLISHER_QUEUE = 64


def bound_stream_messages() -> None:
    write = OutStream.write
    flush_buffers = OutStream._flush

    def bounded_write(self, string):
        if not isinstance(string, str):
            return write(self, string)  # which refuses it as ipykernel does
        for start in range(0, len(string), MESSAGE_TEXT):
            piece = string[start : start + MESSAGE_TEXT]
            write(self, piece)
            self._sandbox_pending = getattr(self, "_sandbox_pending", 0) + len(piece)
            if self._sandbox_pending >= MESSAGE_TEXT:
                self.flush()
        return len(string)

    def counted_flush(self):
        # What was sent no longer counts: only a MiB gathered since the last message forces one.
        self._sandbox_pending = 0
        return flush_buffers(self)

    OutStream.write = bounded_write
    OutStream._flush = counted_flush


def bound_publisher_queue() -> None:
    bind = IPKernelApp._bind_socket

    def bind_bounded(self, socket, port):
        if socket.getsockopt(zmq.TYPE) == zmq.XPUB:  # iopub, before any subscriber can connect
            socket.setsockopt(zmq.SNDHWM, PUBLISHER_QUEUE)
        return bind(self, socket, port)

    IPKernelApp._bind_socket = bind_bounded


if __name__ == "__main__":
    # Not this runtime folder; ipykernel puts the working folder (the user's files) first later.
    del sys.path[0]
    bound_stream_messages()
    bound_publisher_queue()
    launch_new_instance()
