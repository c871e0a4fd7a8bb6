"""What a file is, from its name and its first bytes (format, kind and compression), and its
refusal when that is no table or not what its name says."""

import codecs
import gzip
import os
import zipfile
import zlib

from .delimited import sniff_delimiter
from .encodings import utf16_without_bom
from .limits import COUNT_CHUNK
from .report import Refused, reason
from .workbooks import PROTECTED_WORKBOOK

FORMATS = {
    ".csv": "csv",
    ".tsv": "csv",
    ".txt": "csv",
    ".xlsx": "excel",
    ".xlsm": "excel",
    ".xls": "excel",
    ".parquet": "parquet",
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".feather": "feather",
    ".arrow": "feather",
    ".zip": "zip",
}
_FORMAT_NAMES = {
    "csv": "a CSV file",
    "excel": "an Excel workbook",
    "parquet": "a parquet file",
    "json": "a JSON file",
    "jsonl": "a JSON Lines file",
    "feather": "a Feather/Arrow file",
    "zip": "a zip archive",
}


def file_format(path: str, notes: list) -> tuple[str, str, str | None, str | None]:
    """What ``path`` holds, from its name and its first bytes: (format, kind, compression, the
    compression the load call must name). Raise Refused when it is not a file that can be
    read as a table, or not what its name says."""
    name = os.path.basename(path).lower()
    gzipped = name.endswith(".gz")
    extension = os.path.splitext(name[:-3] if gzipped else name)[1]
    declared = FORMATS.get(extension)
    size = os.path.getsize(path)
    if size == 0:
        raise Refused(f"{path} is empty")
    with open(path, "rb") as file:
        head = file.read(8192)
    kind, looks = _looks_like(head, path)
    compression = None
    load_compression = None  # said in the load call only where pandas cannot infer it
    if gzipped:
        if kind != "gzip":
            raise Refused(f"{path} is not gzip-compressed: it {looks}; remove .gz from its name")
        compression = "gzip"
    elif kind == "gzip" and declared in ("csv", "json", "jsonl", None):
        compression = load_compression = "gzip"
        notes.append(f"{path} is gzip-compressed although its name does not end in .gz")
    if compression:
        head = _gunzip_head(path)
        kind, looks = _looks_like(head, None)
    fmt = declared or _format_from_content(kind)
    if fmt is None:
        raise Refused(f"{path} is not a kind of file that can be read as a table: it {looks}")
    _check_matches(path, fmt, kind, looks, compression)
    return fmt, kind, compression, load_compression


def _looks_like(head: bytes, path: str | None) -> tuple[str, str]:
    """What ``head`` (a file's first bytes) is, as a kind and a phrase ("looks like ...")."""
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")):
        return _zip_kind(path)
    if head.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
        return _ole_kind(path)
    signatures = [
        (b"PAR1", "parquet", "looks like a parquet file"),
        (b"ARROW1", "arrow", "looks like an Arrow/Feather file"),
        (b"FEA1", "feather1", "looks like a Feather (version 1) file"),
        (b"\xff\xff\xff\xff", "arrow-stream", "looks like an Arrow stream"),
        (b"\x1f\x8b", "gzip", "looks like gzip-compressed data"),
        (b"BZh", "other", "looks like bzip2-compressed data"),
        (b"\xfd7zXZ\x00", "other", "looks like xz-compressed data"),
        (b"(\xb5/\xfd", "other", "looks like zstd-compressed data"),
        (b"7z\xbc\xaf\x27\x1c", "other", "looks like a 7-Zip archive"),
        (b"Rar!", "other", "looks like a RAR archive"),
        (b"%PDF", "other", "looks like a PDF document"),
        (b"\x89PNG", "other", "looks like a PNG image"),
        (b"\xff\xd8\xff", "other", "looks like a JPEG image"),
        (b"SQLite format 3\x00", "other", "looks like an SQLite database"),
    ]
    for magic, kind, phrase in signatures:
        if head.startswith(magic):
            return kind, phrase
    text = _as_text(head)
    if text is None:
        return "binary", "holds binary data, not text"
    stripped = text.lstrip("\ufeff \t\r\n")
    if stripped[:1] in ("{", "[") and stripped[1:].lstrip()[:1] in ('"', "{", "[", "]", "}"):
        return "json", "holds JSON text"
    if stripped[:5].lower() in ("<?xml", "<html", "<!doc", "<head", "<body"):
        return "markup", "holds XML or HTML (a web page saved in place of the data?)"
    return "text", "holds CSV text" if sniff_delimiter(stripped, whole=False)[1] else "holds plain text"


def _as_text(head: bytes) -> str | None:
    """``head`` decoded, if it is text in some encoding; None for binary data."""
    for bom, encoding in (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if head.startswith(bom):
            return head.decode(encoding, errors="replace")
    if b"\x00" in head:
        guess = utf16_without_bom(head)
        return head.decode(guess, errors="replace") if guess else None
    controls = sum(1 for byte in head if byte < 32 and byte not in (9, 10, 12, 13))
    if controls > len(head) // 100:
        return None
    return head.decode("utf-8", errors="replace")


def _zip_kind(path: str | None) -> tuple[str, str]:
    if path is None:
        return "zip", "looks like a zip archive"
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            mimetype = archive.read("mimetype")[:100] if "mimetype" in names else b""
    except (zipfile.BadZipFile, OSError, KeyError, ValueError, RuntimeError, NotImplementedError):
        return "damaged-zip", "looks like a damaged zip archive"
    if "xl/workbook.xml" in names or "xl/workbook.bin" in names:
        if "xl/workbook.bin" in names:
            return "xlsb", "looks like a binary Excel workbook (.xlsb)"
        return "xlsx", "looks like an Excel workbook (.xlsx)"
    if "word/document.xml" in names:
        return "other", "looks like a Word document (.docx)"
    if any(name.startswith("ppt/") for name in names):
        return "other", "looks like a PowerPoint presentation (.pptx)"
    if b"opendocument.spreadsheet" in mimetype:
        return "ods", "looks like an OpenDocument spreadsheet (.ods)"
    return "zip", "looks like a zip archive"


def _ole_kind(path: str | None) -> tuple[str, str]:
    """An OLE2 (compound file): an old .xls, or a password-protected xlsx (which is stored as an
    OLE file holding an "EncryptedPackage" stream), or another Office file."""
    if path is None:
        return "ole", "looks like an old-style Office file"
    names = {
        "encrypted": "EncryptedPackage".encode("utf-16-le"),
        "workbook": "Workbook".encode("utf-16-le"),
        "book": "Book".encode("utf-16-le"),
        "word": "WordDocument".encode("utf-16-le"),
    }
    found = set()
    with open(path, "rb") as file:
        tail = b""
        while chunk := file.read(COUNT_CHUNK):
            window = tail + chunk
            found.update(key for key, name in names.items() if name in window)
            tail = chunk[-64:]
    if "encrypted" in found:
        return "encrypted", "looks like a password-protected Office file"
    if "workbook" in found or "book" in found:
        return "xls", "looks like an old-style Excel workbook (.xls)"
    if "word" in found:
        return "other", "looks like an old-style Word document (.doc)"
    return "ole", "looks like an old-style Office file"


def _format_from_content(kind: str) -> str | None:
    return {
        "zip": "zip",
        "xlsx": "excel",
        "xls": "excel",
        "encrypted": "excel",
        "parquet": "parquet",
        "arrow": "feather",
        "feather1": "feather",
        "arrow-stream": "feather",
        "json": "json",
        "text": "csv",
    }.get(kind)


def _check_matches(path: str, fmt: str, kind: str, looks: str, compression: str | None) -> None:
    """Refuse a file whose content is not what its name says, naming what it looks like."""
    expected = {
        "csv": {"text"},
        "json": {"json"},
        "jsonl": {"json"},
        "excel": {"xlsx", "xls", "encrypted"} | ({"zip", "ole"} if compression else set()),
        "parquet": {"parquet"},
        "feather": {"arrow", "feather1", "arrow-stream"},
        "zip": {"zip"},
    }[fmt]
    if kind == "encrypted" and fmt == "excel":
        raise Refused(PROTECTED_WORKBOOK)
    if kind in expected:
        return
    if kind == "damaged-zip" and fmt in ("excel", "zip"):
        what = "Excel workbook" if fmt == "excel" else "zip archive"
        raise Refused(
            f"{path} is a damaged {what}: it is cut short or corrupted; save it again and upload it again"
        )
    if fmt == "excel" and kind == "ole":
        raise Refused(f"{path} is not an Excel workbook: it {looks}")
    if kind in ("ods", "xlsb"):
        raise Refused(f"{path} is not {_FORMAT_NAMES[fmt]}: it {looks}; save it as .xlsx and upload it again")
    raise Refused(f"{path} is not {_FORMAT_NAMES[fmt]}: it {looks}")


def _gunzip_head(path: str) -> bytes:
    try:
        with gzip.open(path, "rb") as file:
            return file.read(8192)
    except (OSError, EOFError, zlib.error) as exc:
        raise Refused(f"{path} is a damaged gzip file ({reason(exc)})") from None
