"""Runs in every kernel before the template's startup file (sandboxd's own, copied to the kernel's
runtime folder): stdout and stderr go out in messages of at most about a MiB of text, so a cell
that prints a lot quickly (ipykernel gathers 0.2 s of output into one message) is cut by
sandboxd's output cap rather than dropped whole as a message over its size limit; and the
kernel's publisher holds only a short queue for sandboxd, which reads it only while a cell runs."""


def _bound_stream_messages(limit=1 << 20):
    from ipykernel.iostream import OutStream

    write = OutStream.write
    flush_buffers = OutStream._flush

    def bounded_write(self, string):
        if not isinstance(string, str):
            return write(self, string)  # which refuses it as ipykernel does
        for start in range(0, len(string), limit):
            piece = string[start : start + limit]
            write(self, piece)
            self._sandbox_pending = getattr(self, "_sandbox_pending", 0) + len(piece)
            if self._sandbox_pending >= limit:
                self.flush()
        return len(string)

    def counted_flush(self):
        # What was sent no longer counts: only a MiB gathered since the last message forces one.
        self._sandbox_pending = 0
        return flush_buffers(self)

    OutStream.write = bounded_write
    OutStream._flush = counted_flush


def _bound_publisher_queue(messages=64):
    """At most ``messages`` wait in the kernel for a reader that is not reading; ZeroMQ drops the
    rest. Its default, 1,000, would let a thread that publishes MiB messages between cells hold
    a GiB here until the kernel's memory limit killed it.

    ZeroMQ applies a new limit to the connections a socket has, but gives later ones the limit
    the socket had when it was bound, so it is set again for each subscriber as it arrives
    (sandboxd connects as the kernel starts, and again after a message over its size limit).
    Both run in the IOPub thread, which owns the socket (ipykernel 7's XPUB, the template's pin)."""
    import zmq

    publisher = get_ipython().kernel.iopub_thread  # noqa: F821 (IPython's builtin)
    welcome = publisher._handle_subscription

    def bound():
        publisher.socket.setsockopt(zmq.SNDHWM, messages)

    def on_subscription(frames):
        bound()
        welcome(frames)

    def install():
        bound()
        # Every subscription, even one for a topic another subscriber still holds (sandboxd's
        # new socket may subscribe before its old one has gone).
        publisher.socket.setsockopt(zmq.XPUB_VERBOSE, 1)
        publisher._xpub_stream.on_recv(on_subscription)

    publisher.schedule(install)


_bound_stream_messages()
_bound_publisher_queue()
del _bound_stream_messages, _bound_publisher_queue
