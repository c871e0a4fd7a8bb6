"""What a kernel's ZeroMQ socket sends sandboxd, read frame by frame (ZMTP 3, the wire protocol of
libzmq 4) so that a message is let through only whole and only when all its frames together hold
at most a budget of bytes.

libzmq bounds a socket's queue in messages and checks its size limit per frame, so a kernel that
sends one message of a thousand 1 MiB frames made sandboxd hold a GiB. Reading the frames here,
before libzmq does, bounds what any message costs sandboxd in bytes: a larger one is read through
and dropped (counted), never held.

The stream is checked as strictly as libzmq reads it, and anything else ends the connection: a
greeting other than ZMTP 3 with the NULL mechanism (libzmq would then read the frames after it
differently), a frame with an unknown flag, a command inside a message or over the budget.

Bytes are read straight into place (``buffer()`` then ``filled()``, as asyncio's BufferedProtocol
reads): a large frame's body into a buffer of its own, the rest through a small scratch buffer."""

from __future__ import annotations

GREETING_BYTES = 64
SIGNATURE_START, SIGNATURE_END = 0xFF, 0x7F  # bytes 0 and 9 of the greeting
MAJOR_VERSION_AT = 10
MECHANISM_AT, MECHANISM_BYTES = 12, 20
NULL_MECHANISM = b"NULL".ljust(MECHANISM_BYTES, b"\0")

MORE, LONG, COMMAND = 0x01, 0x02, 0x04  # a frame's flags

SCRATCH_BYTES = 64 << 10
LARGE_BODY_BYTES = 16 << 10  # a body at least this large is read into a buffer of its own


class BrokenStream(Exception):
    """The kernel sent what is not ZMTP 3 as libzmq reads it: its connection must end."""


class MessageGate:
    """Fed the bytes a kernel's socket sends, returns what may go on to sandboxd's socket: the
    greeting as it comes, then whole commands and whole messages of at most ``budget`` bytes of
    frame bodies, each as a list of pieces to write in order. ``dropped`` counts the messages over
    the budget, ``discarded`` the bytes read of them."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.dropped = 0
        self.discarded = 0
        self._scratch = bytearray(SCRATCH_BYTES)
        self._greeting_read = 0
        self._header = bytearray()  # the frame header being read: flags, then its size
        self._body_left = 0  # bytes of the current frame's body still to come
        self._frame_flags = 0
        self._large_body: memoryview | None = None  # where a large body's next bytes go
        self._pieces: list[bytes | bytearray] = []  # the current message (or command) so far
        self._run = bytearray()  # its latest small frames, in wire bytes
        self._held_body_bytes = 0
        self._in_message = False  # frames with MORE have come
        self._dropping = False  # the current message went over the budget

    def buffer(self) -> memoryview:
        """Where the next bytes read should go; then say how many came with ``filled()``."""
        if self._large_body is not None:
            return self._large_body
        return memoryview(self._scratch)

    def filled(self, count: int) -> list[bytes | bytearray]:
        """``count`` bytes were read into ``buffer()``: the pieces now ready to pass on."""
        if self._large_body is not None:
            self._large_body = self._large_body[count:]
            self._body_left -= count
            out: list[bytes | bytearray] = []
            if not self._body_left:
                self._large_body = None
                self._frame_read(out)
            return out
        return self._parse(memoryview(self._scratch)[:count])

    def feed(self, data: bytes) -> list[bytes | bytearray]:
        """``filled()`` for bytes read elsewhere."""
        out: list[bytes | bytearray] = []
        while data:
            target = self.buffer()
            count = min(len(target), len(data))
            target[:count] = data[:count]
            out += self.filled(count)
            data = data[count:]
        return out

    def end(self) -> None:
        """The stream ends here: a message being read through to drop counts as dropped."""
        if self._dropping:
            self.dropped += 1
            self._dropping = False

    def _parse(self, view: memoryview) -> list[bytes | bytearray]:
        out: list[bytes | bytearray] = []
        while view:
            if self._greeting_read < GREETING_BYTES:
                taken = view[: GREETING_BYTES - self._greeting_read]
                self._check_greeting(taken)
                out.append(bytes(taken))
            elif self._large_body is not None:  # a large body began in this read
                taken = view[: self._body_left]
                self._large_body[: len(taken)] = taken
                out += self.filled(len(taken))
            elif self._body_left:
                taken = view[: self._body_left]
                self._body_left -= len(taken)
                if self._dropping:
                    self.discarded += len(taken)
                else:
                    self._run += taken
                if not self._body_left:
                    self._frame_read(out)
            else:
                taken = view[: self._header_bytes() - len(self._header)]
                self._header += taken
                if len(self._header) == self._header_bytes():
                    self._frame_started(out)
            view = view[len(taken) :]
        return out

    def _check_greeting(self, taken: memoryview) -> None:
        for offset, byte in enumerate(taken, start=self._greeting_read):
            if not _greeting_byte_allowed(offset, byte):
                raise BrokenStream(f"greeting byte {offset} is {byte:#04x}: not ZMTP 3 with NULL")
        self._greeting_read += len(taken)

    def _header_bytes(self) -> int:
        if not self._header:
            return 1
        return 9 if self._header[0] & LONG else 2

    def _frame_started(self, out: list[bytes | bytearray]) -> None:
        flags = self._header[0]
        size = int.from_bytes(self._header[1:], "big")
        if flags & ~(MORE | LONG | COMMAND):
            raise BrokenStream(f"a frame with unknown flags {flags:#04x}")
        if flags & COMMAND and (flags & MORE or self._in_message or size > self.budget):
            raise BrokenStream("a command inside a message, of several frames or over the budget")
        if not self._dropping and self._held_body_bytes + size > self.budget:
            self._dropping = True
            self.discarded += self._held_body_bytes
            self._pieces, self._run = [], bytearray()
        if not self._dropping:
            self._run += self._header
            self._held_body_bytes += size
            if size >= LARGE_BODY_BYTES:
                body = bytearray(size)
                self._pieces += [self._run, body]
                self._run = bytearray()
                self._large_body = memoryview(body)
        self._frame_flags, self._body_left = flags, size
        self._header = bytearray()
        if not size:
            self._frame_read(out)

    def _frame_read(self, out: list[bytes | bytearray]) -> None:
        self._in_message = bool(self._frame_flags & MORE)
        if self._in_message:
            return
        if self._dropping:
            self.dropped += 1
        else:
            out += [*self._pieces, self._run] if self._run else self._pieces
        self._pieces, self._run, self._held_body_bytes, self._dropping = [], bytearray(), 0, False


def _greeting_byte_allowed(offset: int, byte: int) -> bool:
    if offset == 0:
        return byte == SIGNATURE_START
    if offset == 9:
        return byte == SIGNATURE_END
    if offset == MAJOR_VERSION_AT:
        return byte >= 3
    if MECHANISM_AT <= offset < MECHANISM_AT + MECHANISM_BYTES:
        return byte == NULL_MECHANISM[offset - MECHANISM_AT]
    return True
