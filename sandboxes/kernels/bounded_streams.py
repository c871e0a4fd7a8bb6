"""Runs in every kernel before the template's startup file (sandboxd's own, copied to the kernel's
runtime folder): stdout and stderr go out in messages of at most about a MiB of text, so a cell
that prints a lot quickly (ipykernel gathers 0.2 s of output into one message) is cut by
sandboxd's output cap rather than dropped whole as a message over its size limit."""


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


_bound_stream_messages()
del _bound_stream_messages
