"""The lines (and blank lines) of a large text file counted fast, within the time budget, proving
on the way that a UTF-8 file is UTF-8 throughout."""

import codecs
import gzip
import os

import numpy as np

from .limits import COUNT_CHUNK, Budget


def count_lines(
    path: str,
    compression: str | None,
    encoding: str,
    budget: Budget,
    *,
    blanks: bool = True,
    prove_utf8: bool = True,
) -> dict:
    """Count lines and blank lines over the raw bytes in large chunks (numpy, C speed); stop
    when the time budget runs out, saying how far it got (bytes_read of size, both counted in
    the file as stored). With ``prove_utf8`` (a UTF-8 file whose samples were all ASCII, so
    they proved nothing) check on the way that every byte is UTF-8, at no cost for chunks of
    pure ASCII; a sample that held UTF-8 letters already is taken at its word, since decoding
    1 GB of accented text costs more than counting it."""
    name = codecs.lookup(encoding).name
    result = {
        "lines": 0,
        "blank": 0,
        "blank_exact": True,
        "bytes_read": 0,
        "size": os.path.getsize(path),
        "bad_offset": None,
    }
    reserve = min(2.0, 0.25 * max(0.0, budget.left()))  # for parsing the sample afterwards
    with open(path, "rb") as raw:
        file = gzip.GzipFile(fileobj=raw, mode="rb") if compression == "gzip" else raw
        if name.startswith(("utf-16", "utf-32")):
            decoder = codecs.getincrementaldecoder(encoding)()
            _count_text_lines(file, raw, decoder, result, budget=budget, reserve=reserve)
        else:
            utf8 = prove_utf8 and name in ("utf-8", "utf-8-sig")
            _count_byte_lines(file, raw, result, utf8=utf8, blanks=blanks, budget=budget, reserve=reserve)
    return result


def _count_byte_lines(
    file, raw, result: dict, *, utf8: bool, blanks: bool, budget: Budget, reserve: float
) -> None:
    """Newlines counted with numpy over a reused buffer; UTF-8 proven chunk by chunk (a chunk of
    pure ASCII at no cost); blank lines counted only when the sample showed some between rows
    (``blanks``), since that costs more than the count itself."""
    buffer = bytearray(COUNT_CHUNK)
    offset, edge, carry = 0, b"\n", b""  # edge: a line before the first (leading blank lines count)
    blank, triple = b"\n\n", b"\n\n\n"
    while True:
        size = file.readinto(buffer)
        if not size:
            break
        chunk = memoryview(buffer)[:size]
        if offset == 0 and b"\r\n" in buffer[: min(size, 65536)]:
            blank, triple = b"\n\r\n", b"\n\r\n\r\n"
        if (
            utf8
            and result["bad_offset"] is None
            and not (buffer.isascii() if size == len(buffer) else bytes(chunk).isascii())
        ):
            try:
                carry = _utf8_prove(chunk, carry)
            except UnicodeDecodeError as exc:
                result["bad_offset"] = max(0, offset + exc.start - len(carry))
        result["lines"] += int(np.count_nonzero(np.frombuffer(chunk, np.uint8) == 10))
        if blanks:
            whole = buffer if size == len(buffer) else bytes(chunk)
            seam = edge + bytes(chunk[:4])  # a blank line split across two chunks
            found = whole.count(blank) + seam.count(blank) - edge.count(blank) - bytes(chunk[:4]).count(blank)
            result["blank"] += found
            if found and (triple in seam or triple in whole):
                result["blank_exact"] = False  # runs of blank lines: counted approximately
        edge = bytes(chunk[-64:])
        offset += size
        result["bytes_read"] = raw.tell()
        if budget.left() < reserve:
            break
    del chunk  # the buffer's view, released before the buffer
    if result["bytes_read"] < result["size"] or not offset:
        return
    if edge[-1:] != b"\n":
        result["lines"] += 1  # a last line without a newline
    elif not blanks:
        result["blank"] += edge[len(edge.rstrip(b"\r\n")) :].count(b"\n") - 1  # blank lines at the end


def _utf8_prove(chunk, carry: bytes) -> bytes:
    """Decode ``chunk`` as UTF-8 (after the ``carry`` of an unfinished character); return the
    new carry. Raises UnicodeDecodeError at the first byte that is not UTF-8."""
    start = 0
    if carry:
        joined = carry + bytes(chunk[:4])
        _, used = codecs.utf_8_decode(joined, "strict", False)
        start = max(0, used - len(carry))
    _, used = codecs.utf_8_decode(chunk[start:], "strict", False)
    return bytes(chunk[start + used :])


def _count_text_lines(file, raw, decoder, result: dict, *, budget: Budget, reserve: float) -> None:
    """UTF-16 and UTF-32: a newline is not one byte, so count in decoded text."""
    edge, last = "\n", "\n"
    while chunk := file.read(COUNT_CHUNK):
        text = decoder.decode(chunk)
        window = edge + text
        result["lines"] += text.count("\n")
        result["blank"] += (
            window.count("\n\n") + window.count("\n\r\n") - edge.count("\n\n") - edge.count("\n\r\n")
        )
        if "\n\n\n" in window or "\n\r\n\r\n" in window:
            result["blank_exact"] = False
        edge = window[-2:]
        last = text[-1:] or last
        result["bytes_read"] = raw.tell()
        if budget.left() < reserve:
            break
    if result["bytes_read"] >= result["size"] and last != "\n":
        result["lines"] += 1
