"""The encoding of a text file: the one asked for, proven on the samples, or one detected (a BOM,
strict UTF-8, else charset-normalizer leaning to cp1252); samples decoded with it."""

import codecs

from .report import Refused
from .sources import open_bytes


def utf16_without_bom(head: bytes) -> str | None:
    even, odd = head[0::2], head[1::2]
    if odd and odd.count(0) > 0.4 * len(odd) and even.count(0) < 0.05 * len(even):
        return "utf-16-le"
    if even and even.count(0) > 0.4 * len(even) and odd.count(0) < 0.05 * len(odd):
        return "utf-16-be"
    return None


def chosen_encoding(option, head: bytes, extra: bytes) -> str:
    if option:
        try:
            name = codecs.lookup(str(option)).name
        except LookupError:
            raise Refused(
                f"{option!r} is not an encoding Python knows (try utf-8, cp1252, latin-1 or utf-16)"
            ) from None
        try:
            _decode_strict(head, str(option))
            _decode_strict(extra, str(option))
        except UnicodeDecodeError as exc:
            raise Refused(
                f"the file is not {option}: byte 0x{exc.object[exc.start]:02x} at offset {exc.start} "
                "cannot be decoded (leave the encoding empty to detect it)"
            ) from None
        return str(option) if name not in ("utf-8",) else "utf-8"
    return detect_encoding(head, extra)


def _decode_strict(data: bytes, encoding: str) -> str:
    return codecs.getincrementaldecoder(encoding)().decode(data, final=False)


def detect_encoding(head: bytes, extra: bytes, *, utf8: bool = True) -> str:
    """The encoding of a text sample: BOM first, then strict UTF-8, then charset-normalizer."""
    marked = _marked_encoding(head)
    if marked:
        return marked
    sample = head + b"\n" + extra
    if utf8 and _reads_strictly(sample, "utf-8"):
        return "utf-8"
    return _guessed_encoding(sample)


def _marked_encoding(head: bytes) -> str | None:
    """The encoding a sample's first bytes show (a BOM, or UTF-16's zero bytes), if any; raise
    Refused for binary data."""
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if head.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return "utf-32"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    no_bom = utf16_without_bom(head[:8192])
    if no_bom:
        return no_bom
    if b"\x00" in head[:8192]:
        raise Refused("the file holds binary data, not text")
    return None


def _guessed_encoding(sample: bytes) -> str:
    """The encoding charset-normalizer finds for a sample that is not UTF-8 (or was not to be
    taken for it), leaning to cp1252 wherever the detector cannot tell."""
    # The detector reads the head and, above all, the lines holding non-ASCII bytes (where
    # encodings differ). Single-byte code pages often tie on such a sample (cp1250, cp1257 and
    # cp775 read "é" as well as cp1252 does); a tie, or a sample too small to judge, goes to
    # cp1252, by far the most common of them. A real cp1250 text reads worse as cp1252.
    telling = b"\n".join(line for line in sample.splitlines() if not line.isascii())
    import charset_normalizer

    judged = sample[: 192 << 10] + b"\n" + telling[: 64 << 10]
    results = charset_normalizer.from_bytes(judged)
    best = results.best()
    if best is None:
        raise Refused("the file is not text in any common encoding")
    western = next((r for r in results if codecs.lookup(r.encoding).name == "cp1252"), None)
    tied = western is not None and western.chaos <= best.chaos + 0.02
    tied = (
        tied
        or "cp1252" in getattr(best, "could_be_from_charset", ())
        or _reads_alike(sample, best.encoding, "cp1252")
    )
    latin = codecs.lookup(best.encoding).name in ("latin-1", "iso8859-15", "ascii")
    if tied or latin or best.coherence < 0.1:
        for candidate in ("cp1252", "latin-1") if latin else ("cp1252",):
            try:
                _decode_strict(sample, candidate)
                return candidate
            except UnicodeDecodeError:
                continue
    name = codecs.lookup(best.encoding).name
    if name.startswith(("mac-", "cp4", "cp7", "cp8", "cp1006", "cp1125")):
        # A Mac or DOS code page wins on a small sample more often than it is right: prefer
        # the Windows code page that reads the sample almost as well.
        windows = [r for r in results if r.encoding.startswith("cp125") and r.chaos <= best.chaos + 0.1]
        if windows:
            return windows[0].encoding
        # The detector may drop cp1252 altogether for a few signs it finds odd (n°, €, ’) while
        # the words read better in it: then the language decides.
        western = charset_normalizer.from_bytes(judged, cp_isolation=["cp1252"], threshold=1.0).best()
        if western is not None and western.coherence >= best.coherence and _reads_strictly(sample, "cp1252"):
            return "cp1252"
    return best.encoding


def _reads_strictly(sample: bytes, encoding: str) -> bool:
    try:
        _decode_strict(sample, encoding)
    except UnicodeDecodeError:
        return False
    return True


def _reads_alike(sample: bytes, encoding: str, other: str) -> bool:
    try:
        return sample.decode(encoding) == sample.decode(other)
    except (UnicodeDecodeError, LookupError):
        return False


def encoding_after_bad_byte(path, compression, count, head, notes) -> str:
    """The first sample read as UTF-8, but a byte further in does not: detect again from the
    lines around that byte."""
    offset = count["bad_offset"]
    with open_bytes(path, compression) as file:
        file.seek(max(0, offset - (32 << 10)))
        window = file.read(64 << 10)
    encoding = detect_encoding(head[:4096], window, utf8=False)
    notes.append(
        f"{path} reads as UTF-8 up to byte {offset}, where it stops being UTF-8; it is read as {encoding}"
    )
    return encoding


def decode_head(head: bytes, encoding: str, whole: bool) -> str:
    try:
        text = codecs.getincrementaldecoder(encoding)().decode(head, final=whole)
    except UnicodeDecodeError as exc:
        raise Refused(
            f"the file is not {encoding}: byte 0x{exc.object[exc.start]:02x} at offset {exc.start} "
            "cannot be decoded"
        ) from None
    if not whole:
        text = text[: text.rfind("\n") + 1] or text
    return text.lstrip("\ufeff")
