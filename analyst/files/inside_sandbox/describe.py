"""Describe one uploaded file from inside its sandbox: the tables it holds, how they were read,
and the pandas call that loads each one.

The worker sends this file's source to a fresh code context and runs
``main(json.loads('{"path": "data/x.csv", "options": {...}, "limits": {...}}'))``; ``main``
prints exactly one line, the JSON report of issue 11's contract, and never raises: every failure
becomes the report's (or one table's) ``error``, written for people. The kernel already has
``pd`` and ``np``; everything else is imported inside functions, so running this binds only the
names defined here (and ``json``, which the caller's line needs).
"""

import json

_LIMITS = {
    "max_unpacked_bytes": 512 << 20,  # a zip's members, all together, once unpacked
    "max_ratio": 200,  # unpacked / packed size of any member: a zip bomb's is about 1000
    "max_members": 50,
    "max_sheets": 20,
    "sample_bytes": 1 << 20,  # the head read to detect encoding, delimiter, header and numbers
    "sample_rows": 10_000,  # dtypes and nulls come from at most this many rows
    "preview_rows": 10,
    "sample_values": 5,
    "time_budget": 10.0,  # seconds for the whole description
}
_MAX_REPORT = 190_000  # bytes of JSON; the report must stay under 200 KB whatever the file
_MAX_COLUMNS = 200
_PREVIEW_COLUMNS = 50
_CELL_CHARS = 100
_SAMPLE_CHARS = 60
_NAME_CHARS = 200
_MAX_SHEET_NAMES = 500
_COUNT_CHUNK = 16 << 20
_EXCEL_SAMPLE_CELLS = 100_000
_CSV_SAMPLE_BYTES_FACTOR = 8  # a CSV sample parses at most this many sample_bytes
_JSON_WHOLE_BYTES = 64 << 20  # a larger .json is described from records parsed off its head

_FORMATS = {
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
_PROTECTED_WORKBOOK = "the workbook is password-protected; save it without a password and upload it again"


class _Refused(Exception):
    """This file (or one table of it) cannot be described; the message is for people."""


class _Budget:
    """The time left for the whole description."""

    def __init__(self, seconds: float) -> None:
        import time

        self._clock = time.monotonic
        self.deadline = self._clock() + max(0.0, seconds)

    def left(self) -> float:
        return self.deadline - self._clock()

    def over(self) -> bool:
        return self.left() <= 0


def main(request) -> None:
    """Print the report for ``request`` ({"path", "options", "limits"}, or its JSON text) as one
    line of JSON. Library chatter on stdout is swallowed, warnings are silenced."""
    import contextlib
    import io
    import warnings

    report = _empty_report()
    try:
        if isinstance(request, str):
            request = json.loads(request)
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = _describe(request)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - the report is the only way out
        report["error"] = f"the file could not be described: {_reason(exc)}"
    print(_fit(report))


def _empty_report() -> dict:
    return {"format": None, "compression": None, "sheets": None, "tables": [], "notes": [], "error": None}


def _describe(request: dict) -> dict:
    import os

    report = _empty_report()
    path = str(request.get("path") or "")
    options = dict(request.get("options") or {})
    limits = dict(_LIMITS)
    for key, value in (request.get("limits") or {}).items():
        if key in _LIMITS and isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            limits[key] = type(_LIMITS[key])(value)
    budget = _Budget(limits["time_budget"])
    if not path or not os.path.isfile(path):
        report["error"] = f"{path or 'the file'} is not in the sandbox"
        return report
    try:
        _describe_path(path, options, limits, budget, report)
    except _Refused as refused:
        report["error"] = str(refused)
    tables = report["tables"]
    if report["error"] is None and report["format"] not in ("zip", "excel") and len(tables) == 1:
        error = tables[0]["error"]  # the file's only table failed: so did the file
        report["error"] = error and f"{path} could not be read: {error}"
    return report


# --- what a file is ------------------------------------------------------------------------


def _describe_path(
    path: str, options: dict, limits: dict, budget: _Budget, report: dict, *, in_zip: bool = False
) -> None:
    """Fill ``report`` (format, compression, sheets, tables, notes) for one file; raise _Refused
    when the file as a whole cannot be read."""
    notes = report["notes"]
    fmt, kind, compression, load_compression = _file_format(path, notes)
    if fmt == "zip" and in_zip:
        raise _Refused("a zip inside the zip is not unpacked; upload it on its own")
    report["format"] = fmt
    report["compression"] = "zip" if fmt == "zip" else compression
    tables = report["tables"]
    if fmt in ("csv", "jsonl"):  # text read line by line: the same inputs
        reader = _csv_table if fmt == "csv" else _jsonl_table
        tables.append(
            _guard(
                path,
                None,
                reader,
                path,
                compression,
                load_compression,
                options=options,
                limits=limits,
                budget=budget,
                notes=notes,
            )
        )
    elif fmt == "json":
        tables.append(
            _guard(path, None, _json_table, path, compression, load_compression, limits=limits, notes=notes)
        )
    elif fmt == "parquet":
        tables.append(_guard(path, None, _parquet_table, path, compression, limits))
    elif fmt == "feather":
        tables.append(_guard(path, None, _feather_table, path, compression, kind, limits))
    elif fmt == "excel":
        _excel_tables(path, compression, options=options, limits=limits, budget=budget, report=report)
    elif fmt == "zip":
        _zip_tables(path, options, limits, budget, report)


def _file_format(path: str, notes: list) -> tuple[str, str, str | None, str | None]:
    """What ``path`` holds, from its name and its first bytes: (format, kind, compression, the
    compression the load call must name). Raise _Refused when it is not a file that can be
    read as a table, or not what its name says."""
    import os

    name = os.path.basename(path).lower()
    gzipped = name.endswith(".gz")
    extension = os.path.splitext(name[:-3] if gzipped else name)[1]
    declared = _FORMATS.get(extension)
    size = os.path.getsize(path)
    if size == 0:
        raise _Refused(f"{path} is empty")
    with open(path, "rb") as file:
        head = file.read(8192)
    kind, looks = _looks_like(head, path)
    compression = None
    load_compression = None  # said in the load call only where pandas cannot infer it
    if gzipped:
        if kind != "gzip":
            raise _Refused(f"{path} is not gzip-compressed: it {looks}; remove .gz from its name")
        compression = "gzip"
    elif kind == "gzip" and declared in ("csv", "json", "jsonl", None):
        compression = load_compression = "gzip"
        notes.append(f"{path} is gzip-compressed although its name does not end in .gz")
    if compression:
        head = _gunzip_head(path)
        kind, looks = _looks_like(head, None)
    fmt = declared or _format_from_content(kind)
    if fmt is None:
        raise _Refused(f"{path} is not a kind of file that can be read as a table: it {looks}")
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
    return "text", "holds CSV text" if _sniff_delimiter(stripped, whole=False)[1] else "holds plain text"


def _as_text(head: bytes) -> str | None:
    """``head`` decoded, if it is text in some encoding; None for binary data."""
    import codecs

    for bom, encoding in (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if head.startswith(bom):
            return head.decode(encoding, errors="replace")
    if b"\x00" in head:
        guess = _utf16_without_bom(head)
        return head.decode(guess, errors="replace") if guess else None
    controls = sum(1 for byte in head if byte < 32 and byte not in (9, 10, 12, 13))
    if controls > len(head) // 100:
        return None
    return head.decode("utf-8", errors="replace")


def _utf16_without_bom(head: bytes) -> str | None:
    even, odd = head[0::2], head[1::2]
    if odd and odd.count(0) > 0.4 * len(odd) and even.count(0) < 0.05 * len(even):
        return "utf-16-le"
    if even and even.count(0) > 0.4 * len(even) and odd.count(0) < 0.05 * len(odd):
        return "utf-16-be"
    return None


def _zip_kind(path: str | None) -> tuple[str, str]:
    import zipfile

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
        while chunk := file.read(_COUNT_CHUNK):
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
        raise _Refused(_PROTECTED_WORKBOOK)
    if kind in expected:
        return
    if kind == "damaged-zip" and fmt in ("excel", "zip"):
        what = "Excel workbook" if fmt == "excel" else "zip archive"
        raise _Refused(
            f"{path} is a damaged {what}: it is cut short or corrupted; save it again and upload it again"
        )
    if fmt == "excel" and kind == "ole":
        raise _Refused(f"{path} is not an Excel workbook: it {looks}")
    if kind in ("ods", "xlsb"):
        raise _Refused(
            f"{path} is not {_FORMAT_NAMES[fmt]}: it {looks}; save it as .xlsx and upload it again"
        )
    raise _Refused(f"{path} is not {_FORMAT_NAMES[fmt]}: it {looks}")


def _gunzip_head(path: str) -> bytes:
    import gzip
    import zlib

    try:
        with gzip.open(path, "rb") as file:
            return file.read(8192)
    except (OSError, EOFError, zlib.error) as exc:
        raise _Refused(f"{path} is a damaged gzip file ({_reason(exc)})") from None


def _guard(path: str, sheet: str | None, build, *args, **kwargs) -> dict:
    """The table ``build(*args, **kwargs)`` makes, or a table holding the reason it could not."""
    try:
        return build(*args, **kwargs)
    except _Refused as refused:
        table = _table(path, sheet)
        table["error"] = str(refused)
        return table
    except MemoryError:
        table = _table(path, sheet)
        table["error"] = "it is too large to read in the sandbox's memory"
        return table
    except Exception as exc:  # noqa: BLE001 - one table's failure must not lose the others
        table = _table(path, sheet)
        table["error"] = f"it could not be read: {_reason(exc)}"
        return table


def _table(path: str, sheet: str | None = None) -> dict:
    return {
        "path": path,
        "sheet": sheet,
        "rows": None,
        "rows_exact": True,
        "sampled": False,
        "sample_rows": None,
        "columns": [],
        "column_count": 0,  # all of them: "columns" describes at most _MAX_COLUMNS
        "detected": {},
        "load": None,
        "preview": {"columns": [], "rows": []},
        "error": None,
    }


# --- CSV and other delimited text -------------------------------------------------------------


def _csv_table(path, compression, load_compression, *, options, limits, budget, notes) -> dict:
    """One delimited-text table: detect, build the read_csv call, prove it on the sample, and
    count the rows of a file larger than the sample."""
    table = _table(path)
    head, extra, whole = _text_samples(path, compression, limits["sample_bytes"])
    encoding = _chosen_encoding(options.get("encoding"), head, extra)
    layout = _csv_layout(head, encoding, whole, options)
    count = None
    if not whole:  # the pass over every byte also proves the encoding (an accented char at 900 MB)
        prove = (head + extra).isascii()
        count = _count_lines(path, compression, encoding, budget, blanks=layout["blanks"], prove_utf8=prove)
        if count["bad_offset"] is not None and not options.get("encoding"):
            encoding = _encoding_after_bad_byte(path, compression, count, head, notes)
            layout = _csv_layout(head, encoding, whole, options)
    kwargs = _csv_arguments(layout, encoding, load_compression)
    table["detected"] = {
        "encoding": encoding,
        "delimiter": layout["delimiter"],
        "decimal": layout["decimal"],
        "thousands": layout["thousands"],
        "header_row": layout["skip"] if layout["header"] else "none",
    }
    line_bytes = max(1, len(head) // max(1, layout["text"].count("\n")))
    nrows = max(
        100, min(limits["sample_rows"], limits["sample_bytes"] * _CSV_SAMPLE_BYTES_FACTOR // line_bytes)
    )
    frame, kwargs = _read_csv_checked(path, kwargs, nrows, encoding, notes)
    table["load"] = _call("pd.read_csv", path, kwargs)
    _fill_from_frame(table, frame, limits, notes)
    if len(frame) < nrows:
        table["rows"] = len(frame)  # the whole file was read: exact
        return table
    table["sampled"], table["sample_rows"] = True, nrows
    if count is None:
        count = _count_lines(path, compression, encoding, budget, blanks=layout["blanks"])
    blank = count["blank"] - (layout["blank_skipped"] if layout["blanks"] else 0)
    rows = count["lines"] - blank - layout["skip"] - (1 if layout["header"] else 0)
    if count["bytes_read"] < count["size"]:
        rows = int(rows * count["size"] / max(1, count["bytes_read"]))
        table["rows_exact"] = False
        notes.append(
            f"rows of {path} are estimated: counting every line would take longer than the time budget, "
            f"so the count of the first {_size(count['bytes_read'])} is scaled to the whole file"
        )
    elif not count["blank_exact"]:
        table["rows_exact"] = False
        notes.append(f"rows of {path} are estimated: runs of blank lines make the count approximate")
    if layout["multiline"]:
        records = layout["records"]
        rows = int(rows * len(records) / max(1, records[-1][0] + 1))
        table["rows_exact"] = False
        notes.append(
            f"rows of {path} are estimated: some quoted values span several lines, so lines are not rows"
        )
    table["rows"] = max(rows, len(frame))
    return table


def _csv_layout(head: bytes, encoding: str, whole: bool, options: dict) -> dict:
    """What the sample shows: delimiter, where the header is, number style, blank lines."""
    text = _decode_head(head, encoding, whole)
    if "\n" not in text and "\r" in text:
        text = text.replace("\r", "\n")  # old Mac line ends: pandas reads them; sniff them alike
    delimiter = _chosen_delimiter(options.get("delimiter"), text, whole)
    records = _records(text, delimiter, whole)
    start, header = _header_position(records, lambda value: value, options.get("header_row"))
    skip = records[start][0] if records and start < len(records) else 0
    data = [fields for line, fields in records if line > skip and any(f.strip() for f in fields)]
    decimal, thousands = _number_style(data, delimiter)
    if options.get("decimal"):
        decimal = _chosen_decimal(options["decimal"])
        if thousands == decimal:
            thousands = None
    return {
        "text": text,
        "delimiter": delimiter,
        "records": records,
        "skip": skip,
        "header": header,
        "decimal": decimal,
        "thousands": thousands,
        "blank_skipped": sum(1 for line, fields in records if line < skip and not fields),
        "blanks": any(not fields for line, fields in records if line > skip),
        "multiline": any("\n" in field or "\r" in field for _, fields in records for field in fields),
    }


def _csv_arguments(layout: dict, encoding: str, load_compression: str | None) -> dict:
    """read_csv's arguments for ``layout``: only those that differ from pandas' defaults."""
    import codecs

    kwargs = {}
    if layout["delimiter"] != ",":
        kwargs["sep"] = layout["delimiter"]
    if layout["decimal"] != ".":
        kwargs["decimal"] = layout["decimal"]
    if layout["thousands"]:
        kwargs["thousands"] = layout["thousands"]
    if codecs.lookup(encoding).name != "utf-8":
        kwargs["encoding"] = encoding
    if load_compression:
        kwargs["compression"] = load_compression
    if layout["skip"]:
        kwargs["skiprows"] = layout["skip"]
    if not layout["header"]:
        kwargs["header"] = None
    return kwargs


def _text_samples(path: str, compression: str | None, sample_bytes: int) -> tuple[bytes, bytes, bool]:
    """The file's first ``sample_bytes`` (decompressed), whether that is all of it, and whole
    lines from its middle and end (so a character that only appears late is seen too)."""
    import os

    file = _open_bytes(path, compression)
    with file:
        head = file.read(sample_bytes + 1)
        whole = len(head) <= sample_bytes
        head = head[:sample_bytes]
        extra = b""
        if not whole and compression is None:
            size = os.path.getsize(path)
            window = min(64 << 10, sample_bytes // 4)
            for offset in (size // 4, size // 2, 3 * size // 4, max(0, size - window)):
                file.seek(offset)
                chunk = file.read(window)
                first, last = chunk.find(b"\n"), chunk.rfind(b"\n")
                if 0 <= first < last:
                    extra += chunk[first + 1 : last + 1]
    return head, extra, whole


def _open_bytes(path: str, compression: str | None):
    import gzip

    return gzip.open(path, "rb") if compression == "gzip" else open(path, "rb")


def _chosen_encoding(option, head: bytes, extra: bytes) -> str:
    import codecs

    if option:
        try:
            name = codecs.lookup(str(option)).name
        except LookupError:
            raise _Refused(
                f"{option!r} is not an encoding Python knows (try utf-8, cp1252, latin-1 or utf-16)"
            ) from None
        try:
            _decode_strict(head, str(option))
            _decode_strict(extra, str(option))
        except UnicodeDecodeError as exc:
            raise _Refused(
                f"the file is not {option}: byte 0x{exc.object[exc.start]:02x} at offset {exc.start} "
                "cannot be decoded (leave the encoding empty to detect it)"
            ) from None
        return str(option) if name not in ("utf-8",) else "utf-8"
    return _detect_encoding(head, extra)


def _decode_strict(data: bytes, encoding: str) -> str:
    import codecs

    return codecs.getincrementaldecoder(encoding)().decode(data, final=False)


def _detect_encoding(head: bytes, extra: bytes, *, utf8: bool = True) -> str:
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
    _Refused for binary data."""
    import codecs

    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if head.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return "utf-32"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    no_bom = _utf16_without_bom(head[:8192])
    if no_bom:
        return no_bom
    if b"\x00" in head[:8192]:
        raise _Refused("the file holds binary data, not text")
    return None


def _guessed_encoding(sample: bytes) -> str:
    """The encoding charset-normalizer finds for a sample that is not UTF-8 (or was not to be
    taken for it), leaning to cp1252 wherever the detector cannot tell."""
    import codecs

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
        raise _Refused("the file is not text in any common encoding")
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


def _encoding_after_bad_byte(path, compression, count, head, notes) -> str:
    """The first sample read as UTF-8, but a byte further in does not: detect again from the
    lines around that byte."""
    offset = count["bad_offset"]
    with _open_bytes(path, compression) as file:
        file.seek(max(0, offset - (32 << 10)))
        window = file.read(64 << 10)
    encoding = _detect_encoding(head[:4096], window, utf8=False)
    notes.append(
        f"{path} reads as UTF-8 up to byte {offset}, where it stops being UTF-8; it is read as {encoding}"
    )
    return encoding


def _decode_head(head: bytes, encoding: str, whole: bool) -> str:
    import codecs

    try:
        text = codecs.getincrementaldecoder(encoding)().decode(head, final=whole)
    except UnicodeDecodeError as exc:
        raise _Refused(
            f"the file is not {encoding}: byte 0x{exc.object[exc.start]:02x} at offset {exc.start} "
            "cannot be decoded"
        ) from None
    if not whole:
        text = text[: text.rfind("\n") + 1] or text
    return text.lstrip("\ufeff")


def _chosen_delimiter(option, text: str, whole: bool) -> str:
    if option:
        option = {"\\t": "\t", "tab": "\t", "TAB": "\t"}.get(str(option), str(option))
        if len(option) != 1 or option in '\r\n"':
            raise _Refused(f"{option!r} cannot be a delimiter: give one character such as , ; | or tab")
        return option
    return _sniff_delimiter(text, whole)[0]


def _sniff_delimiter(text: str, whole: bool) -> tuple[str, bool]:
    """The delimiter that splits the sample's lines most consistently into two or more fields,
    and whether any did. Comma loses ties: it is the one most often found inside values."""
    import collections
    import csv
    import io

    sample = text[: 64 << 10]
    if not whole and len(text) > len(sample):
        sample = sample[: sample.rfind("\n") + 1] or sample
    best, best_score = ",", None
    for rank, delimiter in enumerate((",", "|", ";", "\t")):
        counts = []
        try:
            for fields in csv.reader(io.StringIO(sample), delimiter=delimiter):
                if any(field.strip() for field in fields):
                    counts.append(len(fields))
                if len(counts) >= 300:
                    break
        except csv.Error:
            continue
        if not counts:
            continue
        width, times = collections.Counter(counts).most_common(1)[0]
        if width < 2:
            continue
        score = (round(times / len(counts), 1), rank, width)
        if best_score is None or score > best_score:
            best, best_score = delimiter, score
    return best, best_score is not None


def _records(text: str, delimiter: str, whole: bool) -> list[tuple[int, list[str]]]:
    """The sample's first records as (index of the line they start on, fields)."""
    import csv
    import io

    reader = csv.reader(io.StringIO(text[: 1 << 20]), delimiter=delimiter)
    records = []
    try:
        while len(records) < 500:
            line = reader.line_num
            records.append((line, next(reader)))
    except (StopIteration, csv.Error):
        pass
    if not whole and len(records) > 1:
        records.pop()  # may be cut short by the end of the sample
    return records


def _header_position(records, typed, option) -> tuple[int, bool]:
    """Where the table starts among ``records`` ((line, cells) pairs), and whether that first
    row is a header. Title lines and blank lines before it are skipped; the first row is a
    header unless it looks like the rows under it (numbers or dates where they have them).
    ``option`` (the user's header_row: a line index, "none", or None) overrides."""
    import collections

    if option is not None and option != "":
        if str(option).lower() == "none":
            start, _ = _header_position(records, typed, None)
            return start, False
        try:
            line = int(option)
        except (TypeError, ValueError):
            raise _Refused(f'header row {option!r} is not a row number (or "none")') from None
        if line < 0:
            raise _Refused(f"header row {line} is not a row number (rows count from 0)")
        for index, (at, _) in enumerate(records):
            if at >= line:
                return index, True
        raise _Refused(f"header row {line} is beyond the rows read ({len(records)})")
    filled = [sum(1 for cell in cells if _text(cell).strip()) for _, cells in records]
    if not any(filled):
        return 0, True
    widths = [len(cells) for (_, cells), count in zip(records, filled, strict=True) if count]
    width = collections.Counter(widths).most_common(1)[0][0]
    full = sorted(
        count for (_, cells), count in zip(records, filled, strict=True) if count and len(cells) == width
    )
    typical = full[len(full) // 2] if full else max(filled)
    start = next(
        (
            i
            for i, count in enumerate(filled)
            if count and count >= max(1, (3 * typical) // 4) and len(records[i][1]) >= min(width, 2)
        ),
        0,
    )
    first = records[start][1]
    rest = [cells for _, cells in records[start + 1 : start + 201] if any(_text(c).strip() for c in cells)]
    if not rest:
        return start, True
    typed_columns = []
    for column in range(len(first)):
        values = [cells[column] for cells in rest if column < len(cells) and _text(cells[column]).strip()]
        if values and sum(1 for v in values if _is_typed(typed(v))) >= 0.8 * len(values):
            typed_columns.append(column)
    if not typed_columns:
        return start, True
    header = any(_text(first[c]).strip() and not _is_typed(typed(first[c])) for c in typed_columns)
    if not header and all(_text(cell).strip() for cell in first):
        # Years over columns of figures ("country, 2019, 2020"): a header, unless the rows
        # under them are years too.
        years = [c for c in typed_columns if _is_year(typed(first[c]))]
        header = bool(years) and any(
            not all(_is_year(typed(cells[c])) for cells in rest if c < len(cells)) for c in years
        )
    return start, header


def _is_year(value) -> bool:
    text = _text(value).strip()
    if text.endswith(".0"):
        text = text[:-2]
    return text.isdigit() and 1800 <= int(text) <= 2100


def _text(value) -> str:
    return "" if value is None else str(value)


def _is_typed(value) -> bool:
    """A number or a date (a cell's value, or text that reads as one)."""
    import datetime
    import re

    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float, datetime.date, datetime.time, datetime.datetime)):
        return True
    text = _text(value).strip()
    if not text:
        return False
    number = r"[+-]?[$€£]?\s?(\d[\d.,'\u00a0\u202f ]*\d|\d)([eE][+-]?\d+)?\s?%?[$€£]?"
    date = r"\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}([ T]\d{1,2}:\d{2}(:\d{2})?)?.*"
    return bool(
        re.fullmatch(number, text) or re.fullmatch(r"[+-]?\d*[.,]\d+", text) or re.fullmatch(date, text)
    )


def _number_style(rows: list[list[str]], delimiter: str) -> tuple[str, str | None]:
    """The decimal mark and thousands separator the numbers in ``rows`` use."""
    seen, spaces = _number_kinds(rows)
    comma = seen["comma_dec"] + seen["dot_thousands_comma_dec"] + (seen["space_thousands"] if spaces else 0)
    dot = seen["dot_dec"] + seen["comma_thousands_dot_dec"]
    if comma > dot:
        decimal = ","
    elif dot:
        decimal = "."
    elif seen["ambiguous_comma"] and delimiter == ";":
        decimal = ","  # "1,234" in a semicolon file: European, so a decimal comma
    else:
        decimal = "."
    if decimal == ",":
        if seen["dot_thousands_comma_dec"] or seen["dot_thousands"] or seen["ambiguous_dot"]:
            return ",", "."
        if spaces:
            return ",", spaces.most_common(1)[0][0]
        return ",", None
    if seen["comma_thousands_dot_dec"] or seen["comma_thousands"] or seen["ambiguous_comma"]:
        return ".", ","
    return ".", None


def _number_kinds(rows: list[list[str]]):
    """How often each way of writing a number appears in the columns of ``rows`` that hold
    numbers, and the spaces used as thousands separators (two Counters)."""
    import collections
    import re

    patterns = [
        ("comma_dec", r"[+-]?\d+,\d+"),
        ("dot_dec", r"[+-]?(\d+\.\d+|\.\d+|\d+(\.\d+)?[eE][+-]?\d+)"),
        ("dot_thousands_comma_dec", r"[+-]?\d{1,3}(\.\d{3})+,\d+"),
        ("comma_thousands_dot_dec", r"[+-]?\d{1,3}(,\d{3})+\.\d+"),
        ("dot_thousands", r"[+-]?\d{1,3}(\.\d{3}){2,}"),
        ("comma_thousands", r"[+-]?\d{1,3}(,\d{3}){2,}"),
        ("space_thousands", r"[+-]?\d{1,3}([ \u00a0\u202f]\d{3})+(,\d+)?"),
        ("int", r"[+-]?\d+"),
    ]
    compiled = [(name, re.compile(pattern)) for name, pattern in patterns]
    seen = collections.Counter()
    spaces = collections.Counter()
    width = max((len(r) for r in rows), default=0)
    for column in range(min(width, 500)):
        values = [r[column].strip() for r in rows[:300] if column < len(r) and r[column].strip()]
        kinds = []
        for value in values:
            kind = next((name for name, regex in compiled if regex.fullmatch(value)), None)
            if kind in ("comma_dec", "dot_dec") and re.fullmatch(r"[+-]?[1-9]\d{0,2}[.,]\d{3}", value):
                kind = "ambiguous_" + ("comma" if "," in value else "dot")
            kinds.append(kind)
            if kind == "space_thousands":
                spaces.update(ch for ch in value if ch in " \u00a0\u202f")
        if not kinds or sum(1 for k in kinds if k) < 0.8 * len(kinds):
            continue  # not a column of numbers
        seen.update(k for k in kinds if k)
    return seen, spaces


def _chosen_decimal(option) -> str:
    if str(option) not in (".", ","):
        raise _Refused(f"{option!r} cannot be a decimal mark: give . or ,")
    return str(option)


def _read_csv_checked(path: str, kwargs: dict, nrows: int, encoding: str, notes: list):
    """Read the sample with exactly the load call's arguments (plus nrows), so the call we
    report is one that works. Lines with too many fields are skipped, and that is said."""
    import re

    import pandas as pd

    try:
        return pd.read_csv(path, nrows=nrows, **kwargs), kwargs
    except UnicodeDecodeError as exc:
        raise _Refused(
            f"the file is not {encoding}: byte 0x{exc.object[exc.start]:02x} cannot be decoded "
            "(choose another encoding)"
        ) from None
    except pd.errors.EmptyDataError:
        raise _Refused("it holds no table: no columns were found") from None
    except pd.errors.ParserError as exc:
        match = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(exc))
        if not match:
            raise _Refused(f"it could not be parsed as delimited text: {_reason(exc)}") from None
        expected, line, saw = match.groups()
        kwargs = {**kwargs, "on_bad_lines": "skip"}
        notes.append(
            f"line {line} of {path} has {saw} fields where {expected} were expected; "
            "such lines are skipped (on_bad_lines='skip')"
        )
        return pd.read_csv(path, nrows=nrows, **kwargs), kwargs


def _count_lines(
    path: str,
    compression: str | None,
    encoding: str,
    budget: _Budget,
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
    import codecs
    import gzip
    import os

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
    file, raw, result: dict, *, utf8: bool, blanks: bool, budget: _Budget, reserve: float
) -> None:
    """Newlines counted with numpy over a reused buffer; UTF-8 proven chunk by chunk (a chunk of
    pure ASCII at no cost); blank lines counted only when the sample showed some between rows
    (``blanks``), since that costs more than the count itself."""
    import numpy as np

    buffer = bytearray(_COUNT_CHUNK)
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
    import codecs

    start = 0
    if carry:
        joined = carry + bytes(chunk[:4])
        _, used = codecs.utf_8_decode(joined, "strict", False)
        start = max(0, used - len(carry))
    _, used = codecs.utf_8_decode(chunk[start:], "strict", False)
    return bytes(chunk[start + used :])


def _count_text_lines(file, raw, decoder, result: dict, *, budget: _Budget, reserve: float) -> None:
    """UTF-16 and UTF-32: a newline is not one byte, so count in decoded text."""
    edge, last = "\n", "\n"
    while chunk := file.read(_COUNT_CHUNK):
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


# --- JSON ---------------------------------------------------------------------------------------


def _json_table(path, compression, load_compression, *, limits, notes) -> dict:
    import os

    import pandas as pd

    table = _table(path)
    with _open_bytes(path, compression) as file:
        head = file.read(limits["sample_bytes"])
    encoding = _detect_encoding(head, b"")
    kwargs = {} if encoding in ("utf-8",) else {"encoding": encoding}
    if load_compression:
        kwargs["compression"] = load_compression
    text = _decode_head(head, encoding, True).lstrip()
    if os.path.getsize(path) > _JSON_WHOLE_BYTES and text.startswith("["):
        return _json_records_sample(path, text, kwargs, table=table, limits=limits, notes=notes)
    orient, wrapped = None, None
    if text.startswith("{"):
        orient, wrapped = _json_object_shape(_json_value(path, compression, encoding))
    if wrapped is not None:  # {"data": [records]}: the records are one level down
        opener = (
            f"__import__('gzip').open({path!r})" if compression else f"open({path!r}, encoding={encoding!r})"
        )
        load = f"pd.json_normalize(__import__('json').load({opener})[{wrapped!r}])"
        frame = eval(load, {"pd": pd, "__builtins__": __builtins__})  # noqa: S307 - our own string
        notes.append(f"the records of {path} are under its key {wrapped!r}")
    else:
        if orient:
            kwargs["orient"] = orient
        try:
            frame = pd.read_json(path, **kwargs)
        except ValueError as exc:
            raise _Refused(
                "it is not JSON that makes a table (a list of records or an object of columns): "
                f"{_reason(exc)}"
            ) from None
        load = _call("pd.read_json", path, kwargs)
    table["load"] = load
    table["detected"] = {"encoding": encoding}
    table["rows"] = len(frame)
    _fill_from_frame(table, frame, limits, notes)
    return table


def _json_value(path: str, compression: str | None, encoding: str):
    """The whole JSON document (parsed once; it is at most _JSON_WHOLE_BYTES)."""
    with _open_bytes(path, compression) as file:
        try:
            return json.loads(file.read().decode(encoding))
        except (ValueError, UnicodeDecodeError) as exc:
            raise _Refused(f"it is not valid JSON: {_reason(exc)}") from None


def _json_object_shape(value) -> tuple[str | None, str | None]:
    """How a top-level JSON object holds its table: read_json's orient for it, or the key a
    list of records sits under (an API's {"data": [...]})."""
    if not isinstance(value, dict):
        return None, None
    keys = set(value)
    if {"schema", "data"} <= keys:
        return "table", None
    if {"columns", "data"} <= keys:
        return "split", None
    lists = [
        key for key, item in value.items() if isinstance(item, list) and item and isinstance(item[0], dict)
    ]
    if len(lists) == 1 and not all(isinstance(item, dict) for item in value.values()):
        return None, lists[0]
    inner = [item for item in value.values() if isinstance(item, dict)]
    if inner and len(inner) == len(value):
        # {"0": {"a": 1}, "1": {"a": 2}}: rows keyed by index, where pandas' default (columns)
        # would make each row a column.
        outer_numbers = all(str(key).lstrip("-").isdigit() for key in value)
        inner_numbers = all(str(key).lstrip("-").isdigit() for item in inner[:20] for key in item)
        if outer_numbers and not inner_numbers:
            return "index", None
    return None, None


def _json_records_sample(path, text, kwargs, *, table, limits, notes) -> dict:
    """A big list of records: parse records off the head, estimate the rest by size."""
    import os

    import pandas as pd

    decoder = json.JSONDecoder()
    records, at = [], 1
    while len(records) < limits["sample_rows"]:
        while at < len(text) and text[at] in " \t\r\n,":
            at += 1
        if at >= len(text) or text[at] == "]":
            break
        try:
            value, at = decoder.raw_decode(text, at)
        except ValueError:
            break
        records.append(value)
    if not records:
        raise _Refused("its first records could not be parsed as JSON")
    frame = pd.DataFrame.from_records(records) if isinstance(records[0], dict) else pd.DataFrame(records)
    table["load"] = _call("pd.read_json", path, kwargs)
    table["rows"] = int(len(records) * os.path.getsize(path) / max(1, len(text[:at].encode())))
    table["rows_exact"], table["sampled"], table["sample_rows"] = False, True, len(records)
    notes.append(
        f"rows of {path} are estimated: it is too large to parse whole here, so its first "
        f"{len(records)} records were read and the rest reckoned from its size"
    )
    _fill_from_frame(table, frame, limits, notes)
    return table


def _jsonl_table(path, compression, load_compression, *, options, limits, budget, notes) -> dict:
    import pandas as pd

    table = _table(path)
    with _open_bytes(path, compression) as file:
        head = file.read(limits["sample_bytes"] + 1)
    whole = len(head) <= limits["sample_bytes"]
    encoding = _chosen_encoding(options.get("encoding"), head[: limits["sample_bytes"]], b"")
    kwargs = {"lines": True}
    if encoding != "utf-8":
        kwargs["encoding"] = encoding
    if load_compression:
        kwargs["compression"] = load_compression
    nrows = limits["sample_rows"]
    try:
        frame = pd.read_json(path, nrows=nrows, **kwargs)
    except ValueError as exc:
        raise _Refused(f"it is not JSON Lines (one JSON object per line): {_reason(exc)}") from None
    table["load"] = _call("pd.read_json", path, kwargs)
    table["detected"] = {"encoding": encoding}
    _fill_from_frame(table, frame, limits, notes)
    if whole or len(frame) < nrows:
        table["rows"] = len(frame)
        return table
    table["sampled"], table["sample_rows"] = True, nrows
    count = _count_lines(path, compression, encoding, budget)
    rows = count["lines"] - count["blank"]
    if count["bytes_read"] < count["size"]:
        rows = int(rows * count["size"] / max(1, count["bytes_read"]))
        table["rows_exact"] = False
        notes.append(
            f"rows of {path} are estimated from the first {_size(count['bytes_read'])}: "
            "counting every line took longer than the time budget"
        )
    table["rows"] = max(rows, len(frame))
    return table


# --- parquet and Feather/Arrow ----------------------------------------------------------------


def _binary_source(path: str, compression: str | None, limits: dict):
    """What pyarrow reads: the path, or (gzip) the decompressed bytes, if small enough."""
    import gzip
    import io

    if compression != "gzip":
        return path
    with gzip.open(path, "rb") as file:
        data = file.read(limits["max_unpacked_bytes"] + 1)
    if len(data) > limits["max_unpacked_bytes"]:
        raise _Refused(
            f"it unpacks to more than {_size(limits['max_unpacked_bytes'])}; upload it uncompressed"
        )
    return io.BytesIO(data)


def _gzip_load(function: str, path: str, kwargs: dict, compression: str | None) -> str:
    if compression != "gzip":
        return _call(function, path, kwargs)
    arguments = "".join(f", {key}={value!r}" for key, value in kwargs.items())
    return f"{function}(__import__('gzip').open({path!r}){arguments})"


def _parquet_table(path, compression, limits) -> dict:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = _table(path)
    try:
        parquet = pq.ParquetFile(_binary_source(path, compression, limits))
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise _Refused(f"it is a damaged or incomplete parquet file ({_reason(exc)})") from None
    rows = parquet.metadata.num_rows
    nrows = max(1, min(limits["sample_rows"], rows))
    try:
        batch = next(parquet.iter_batches(batch_size=nrows), None)
        arrow = pa.Table.from_batches([batch]) if batch is not None else parquet.schema_arrow.empty_table()
        frame = arrow.to_pandas()
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise _Refused(f"its data could not be read: the parquet file is damaged ({_reason(exc)})") from None
    table["load"] = _gzip_load("pd.read_parquet", path, {}, compression)
    table["rows"] = rows
    if rows > len(frame):
        table["sampled"], table["sample_rows"] = True, len(frame)
    _fill_from_frame(table, frame, limits, [])
    return table


def _feather_table(path, compression, kind, limits) -> dict:
    import pyarrow as pa

    table = _table(path)
    source = _binary_source(path, compression, limits)
    nrows = limits["sample_rows"]
    try:
        if kind == "feather1":
            import pyarrow.feather

            arrow = pyarrow.feather.read_table(source)
            rows, sample = arrow.num_rows, arrow.slice(0, nrows)
            load = _gzip_load("pd.read_feather", path, {}, compression)
        elif kind == "arrow-stream":
            reader = pa.ipc.open_stream(source)
            batches, rows = [], 0
            for batch in reader:
                if rows < nrows:
                    batches.append(batch)
                rows += batch.num_rows
            sample = pa.Table.from_batches(batches, schema=reader.schema).slice(0, nrows)
            opener = f"__import__('gzip').open({path!r})" if compression else repr(path)
            load = f"__import__('pyarrow').ipc.open_stream({opener}).read_pandas()"
        else:
            reader = pa.ipc.open_file(pa.memory_map(path) if isinstance(source, str) else source)
            rows = reader.count_rows()
            batches, taken = [], 0
            for index in range(reader.num_record_batches):
                if taken >= nrows:
                    break
                batch = reader.get_batch(index)
                batches.append(batch)
                taken += batch.num_rows
            sample = pa.Table.from_batches(batches, schema=reader.schema).slice(0, nrows)
            load = _gzip_load("pd.read_feather", path, {}, compression)
        frame = sample.to_pandas()
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise _Refused(f"it is a damaged or incomplete Arrow/Feather file ({_reason(exc)})") from None
    table["load"] = load
    table["rows"] = rows
    if rows > len(frame):
        table["sampled"], table["sample_rows"] = True, len(frame)
    _fill_from_frame(table, frame, limits, [])
    return table


# --- Excel --------------------------------------------------------------------------------------


def _excel_tables(path, compression, *, options, limits, budget, report) -> None:
    import zipfile

    import pandas as pd

    notes = report["notes"]
    source = _binary_source(path, compression, limits)
    try:
        workbook = pd.ExcelFile(source)
    except zipfile.BadZipFile as exc:
        raise _Refused(f"{path} is a damaged Excel workbook ({_reason(exc)})") from None
    except Exception as exc:  # noqa: BLE001 - openpyxl and xlrd raise many kinds
        if "encrypt" in str(exc).lower() or "password" in str(exc).lower():
            raise _Refused(_PROTECTED_WORKBOOK) from None
        raise _Refused(f"{path} could not be read as an Excel workbook ({_reason(exc)})") from None
    with workbook:
        names = [str(name) for name in workbook.sheet_names]
        report["sheets"] = names[:_MAX_SHEET_NAMES]
        if len(names) > _MAX_SHEET_NAMES:
            notes.append(
                f"the workbook has {len(names)} sheets; only the first {_MAX_SHEET_NAMES} names are listed"
            )
        if not names:
            raise _Refused(f"{path} holds no sheets")
        chosen = options.get("sheet")
        if chosen not in (None, ""):
            if str(chosen) not in names:
                listed = ", ".join(repr(n) for n in names[:20])
                raise _Refused(f"{path} has no sheet {str(chosen)!r}; its sheets are {listed}")
            order = [str(chosen)] + [name for name in names if name != str(chosen)]
        else:
            order = names
        for index, name in enumerate(order):
            if index >= limits["max_sheets"]:
                notes.append(f"only the first {limits['max_sheets']} of {len(names)} sheets were described")
                break
            if budget.over():
                notes.append(f"only {index} of {len(names)} sheets were described: the time budget ran out")
                break
            header_option = options.get("header_row") if index == 0 else None
            report["tables"].append(
                _guard(
                    path,
                    name,
                    _sheet_table,
                    workbook,
                    path,
                    name,
                    compression=compression,
                    header_option=header_option,
                    sheet_count=len(names),
                    limits=limits,
                    budget=budget,
                    notes=notes,
                )
            )


def _sheet_table(
    workbook, path, name, *, compression, header_option, sheet_count, limits, budget, notes
) -> dict:
    table = _table(path, name)
    rows_head, width, total = _sheet_head(workbook, name)
    if rows_head is None:
        raise _Refused(f"sheet {name!r} is a chart, not a table")
    if not rows_head:
        table["rows"] = 0
        table["detected"] = {"sheet": name, "header_row": "none"}
        table["load"] = _gzip_load("pd.read_excel", path, {"sheet_name": name}, compression)
        notes.append(f"sheet {name!r} of {path} is empty")
        return table
    records = list(enumerate(rows_head))
    start, header = _header_position(records, lambda value: value, header_option)
    kwargs = {"sheet_name": name} if sheet_count > 1 else {}
    if header:
        if start:
            kwargs["header"] = start
    else:
        kwargs["header"] = None
        if start:
            kwargs["skiprows"] = start
    nrows = max(100, min(limits["sample_rows"], _EXCEL_SAMPLE_CELLS // max(1, width)))
    frame = workbook.parse(name, nrows=nrows, **{k: v for k, v in kwargs.items() if k != "sheet_name"})
    table["load"] = _gzip_load("pd.read_excel", path, kwargs, compression)
    table["detected"] = {"sheet": name, "header_row": start if header else "none"}
    _fill_from_frame(table, frame, limits, notes)
    if len(frame) < nrows:
        table["rows"] = len(frame)
        return table
    table["sampled"], table["sample_rows"] = True, nrows
    how = "the sheet's recorded size"
    if total is None or total < start + len(frame):  # no dimension recorded, or a wrong one
        total, how = _xlsx_last_row(workbook.book, name, budget), "the last row in the sheet's file"
    data_rows = (total or 0) - start - (1 if header else 0)
    table["rows"] = max(data_rows, len(frame))
    table["rows_exact"] = False
    notes.append(f"rows of sheet {name!r} of {path} are estimated from {how}")
    return table


def _xlsx_last_row(book, name: str, budget: _Budget) -> int | None:
    """The number of the last row element in an .xlsx sheet's XML (read as a zlib stream, no
    parsing), for a sheet whose dimension says nothing; None when it cannot be had in time."""
    import re

    if hasattr(book, "sheet_by_name"):
        return None
    sheet = book[name]
    archive, part = getattr(book, "_archive", None), getattr(sheet, "_worksheet_path", None)
    if archive is None or part is None:
        return None
    last, tail = None, b""
    with archive.open(part) as stream:
        while chunk := stream.read(4 << 20):
            window = tail + chunk
            found = re.findall(rb'<row[^>]*?\sr="(\d+)"', window[-65536:])
            if found:
                last = int(found[-1])
            tail = window[-256:]
            if budget.over():
                return None
    return last


def _sheet_head(workbook, name: str) -> tuple[list | None, int, int | None]:
    """A sheet's first rows (cell values), its width, and its recorded row count: None rows for
    a chart sheet."""
    book = workbook.book
    wanted = 300
    if hasattr(book, "sheet_by_name"):  # xlrd: an old .xls
        sheet = book.sheet_by_name(name)
        rows = [sheet.row_values(i) for i in range(min(wanted, sheet.nrows))]
        return rows, sheet.ncols, sheet.nrows
    sheet = book[name]
    if not hasattr(sheet, "iter_rows"):
        return None, 0, None
    rows = []
    for values in sheet.iter_rows(max_row=wanted, values_only=True):
        rows.append(list(values))
    while rows and not any(v is not None and str(v).strip() for v in rows[-1]):
        rows.pop()
    width = max((len(r) for r in rows), default=0)
    total = sheet.max_row if isinstance(getattr(sheet, "max_row", None), int) else None
    return rows, width, total


# --- zip ----------------------------------------------------------------------------------------


def _zip_tables(path, options, limits, budget, report) -> None:
    """Unpack a zip's members to data/<zip stem>/..., refusing bombs, path escapes and links,
    then describe each member as its own table(s)."""
    import zipfile

    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise _Refused(f"{path} is a damaged zip archive ({_reason(exc)})") from None
    with archive:
        members = _zip_members(archive, path)
        total = _unpacked_size(path, members, limits)
        folder = _unpack_folder(path, total)
        extracted = _unpack_all(archive, members, path, folder, limits)
    for target in extracted:
        _describe_member(target, options, limits, budget, report)


def _zip_members(archive, path: str) -> list[tuple]:
    """The files in ``archive`` worth unpacking, as (info, the parts of the path to unpack it
    to); raise _Refused for a member that would escape its folder, a link, a name holding
    control characters, a password, or no files at all."""
    import os
    import stat

    members = []
    for info in archive.infolist():
        name = info.filename.replace("\\", "/")
        if (
            info.is_dir()
            or name.startswith("__MACOSX/")
            or os.path.basename(name) in (".DS_Store", "Thumbs.db")
        ):
            continue
        parts = name.split("/")
        if name.startswith("/") or ".." in parts or (len(parts[0]) == 2 and parts[0][1] == ":"):
            raise _Refused(
                f"{path} is refused: its member {info.filename!r} would be unpacked outside its folder"
            )
        if stat.S_ISLNK(info.external_attr >> 16):
            raise _Refused(f"{path} is refused: its member {info.filename!r} is a symbolic link")
        if any(ord(ch) < 32 for ch in name):
            raise _Refused(f"{path} is refused: a member's name holds control characters")
        if info.flag_bits & 0x1:
            raise _Refused(f"{path} is password-protected; zip it again without a password")
        members.append((info, [part for part in parts if part not in ("", ".")]))
    if not members:
        raise _Refused(f"{path} holds no files")
    return members


def _unpacked_size(path: str, members: list[tuple], limits: dict) -> int:
    """What ``members`` unpack to, all together, as their headers say; raise _Refused for too
    many members, too large a total, or a member that looks like a zip bomb."""
    if len(members) > limits["max_members"]:
        raise _Refused(
            f"{path} holds {len(members)} files; at most {limits['max_members']} are unpacked. "
            "Zip fewer files together"
        )
    total = sum(info.file_size for info, _ in members)
    if total > limits["max_unpacked_bytes"]:
        raise _Refused(
            f"{path} is refused: it would unpack to {_size(total)}, "
            f"more than the limit of {_size(limits['max_unpacked_bytes'])}"
        )
    for info, _ in members:
        ratio = info.file_size / max(1, info.compress_size)
        if info.file_size > (1 << 20) and ratio > limits["max_ratio"]:
            raise _Refused(
                f"{path} is refused as a likely zip bomb: {info.filename!r} would unpack to "
                f"{ratio:.0f} times its packed size (the limit is {limits['max_ratio']})"
            )
    return total


def _unpack_folder(path: str, total: int) -> str:
    """The folder a zip unpacks to (data/<zip stem>), once it is known that ``total`` bytes fit
    on the disk and that nothing but a folder already has that name."""
    import os
    import shutil

    stem = os.path.basename(path)
    stem = stem[: -len(".zip")] if stem.lower().endswith(".zip") else stem + "_files"
    folder = os.path.join(os.path.dirname(path), stem)
    if os.path.lexists(folder) and (os.path.islink(folder) or not os.path.isdir(folder)):
        raise _Refused(f"{folder} already exists and is not a folder; rename the zip and upload it again")
    free = shutil.disk_usage(os.path.dirname(path) or ".").free
    if total > free:
        raise _Refused(f"{path} would unpack to {_size(total)} but the sandbox has {_size(free)} free")
    return folder


def _describe_member(target: str, options: dict, limits: dict, budget: _Budget, report: dict) -> None:
    """Add the tables (and notes) of one unpacked member to the zip's ``report``."""
    import os

    notes = report["notes"]
    if budget.over():
        table = _table(target)
        table["error"] = "it was unpacked but not described: the time budget ran out"
        report["tables"].append(table)
        return
    name = os.path.basename(target).lower()
    inner = name[:-3] if name.endswith(".gz") else name
    if os.path.splitext(inner)[1] not in _FORMATS:
        notes.append(f"{target} was unpacked but is not a kind of file read as a table")
        return
    if os.path.splitext(inner)[1] == ".zip":
        notes.append(f"{target} is a zip inside the zip; it is not unpacked further (upload it on its own)")
        return
    member_report = _empty_report()
    try:
        _describe_path(target, options, limits, budget, member_report, in_zip=True)
    except _Refused as refused:
        table = _table(target)
        table["error"] = str(refused)
        member_report["tables"] = [table]
    report["tables"].extend(member_report["tables"])
    notes.extend(member_report["notes"])


def _unpack_all(archive, members: list, path: str, folder: str, limits: dict) -> list[str]:
    """Unpack every member under ``folder``; on any failure remove what this run wrote (files,
    and the folders it made), so a refused zip leaves nothing behind."""
    import os

    written: list[str] = []
    made: list[str] = []
    try:
        for info, parts in members:
            target = os.path.join(folder, *parts)
            if not os.path.realpath(target).startswith(os.path.realpath(folder) + os.sep):
                raise _Refused(
                    f"{path} is refused: its member {info.filename!r} would be unpacked outside its folder"
                )
            missing = []
            parent = os.path.dirname(target)
            while not os.path.isdir(parent):
                missing.append(parent)
                parent = os.path.dirname(parent)
            for directory in reversed(missing):
                os.mkdir(directory)
                made.append(directory)
            _unpack_member(archive, info, path, target, limits)
            written.append(target)
    except BaseException:
        for target in written:
            os.unlink(target)
        for directory in reversed(made):
            try:
                os.rmdir(directory)
            except OSError:
                pass
        raise
    return written


def _unpack_member(archive, info, path: str, target: str, limits: dict) -> None:
    """Write one member, counting what it really unpacks to (its header may lie)."""
    import errno
    import os
    import zipfile
    import zlib

    if os.path.islink(target):
        os.unlink(target)
    if os.path.isdir(target):
        raise _Refused(f"{target} is a folder already; rename the zip and upload it again")
    written = 0
    try:
        with archive.open(info) as source, open(target, "wb") as out:
            while chunk := source.read(1 << 20):
                written += len(chunk)
                if written > info.file_size or written > limits["max_unpacked_bytes"]:
                    raise _Refused(
                        f"{path} is refused: its member {info.filename!r} unpacks to more than the zip says"
                    )
                out.write(chunk)
    except BaseException as exc:
        if os.path.exists(target):
            os.unlink(target)
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
            raise _Refused(f"{path} does not fit in the sandbox's disk once unpacked") from None
        if isinstance(exc, (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError)):
            raise _Refused(
                f"{path} is damaged: its member {info.filename!r} cannot be unpacked ({_reason(exc)})"
            ) from None
        raise


# --- the report's parts ---------------------------------------------------------------------------


def _fill_from_frame(table: dict, frame, limits: dict, notes: list) -> None:
    """Columns (dtype, nulls, samples) and the preview, from a frame of the table's first rows."""
    columns = list(frame.columns)
    if len(columns) > _MAX_COLUMNS:
        notes.append(
            f"{table['path']}{_sheet_label(table)} has {len(columns)} columns; "
            f"only the first {_MAX_COLUMNS} are described"
        )
    described = []
    for index, name in enumerate(columns[:_MAX_COLUMNS]):
        column = frame.iloc[:, index]
        described.append(
            {
                "name": _clip(name, _NAME_CHARS),
                "dtype": str(column.dtype),
                "nulls": int(column.isna().sum()),
                "samples": _samples(column, limits["sample_values"]),
            }
        )
    table["columns"] = described
    table["column_count"] = len(columns)
    head = frame.iloc[: limits["preview_rows"], :_PREVIEW_COLUMNS]
    table["preview"] = {
        "columns": [_clip(name, _CELL_CHARS) for name in head.columns],
        "rows": [
            [_clip(value, _CELL_CHARS) for value in row] for row in head.itertuples(index=False, name=None)
        ],
    }


def _sheet_label(table: dict) -> str:
    return f" (sheet {table['sheet']!r})" if table.get("sheet") else ""


def _samples(column, count: int) -> list[str]:
    seen = []
    for value in column.dropna().head(1000):
        text = _clip(value, _SAMPLE_CHARS)
        if text not in seen:
            seen.append(text)
            if len(seen) >= count:
                break
    return seen


def _clip(value, limit: int) -> str:
    try:
        import pandas as pd

        if not isinstance(value, (list, dict, tuple, set)) and pd.isna(value):
            return ""
    except (TypeError, ValueError):
        pass
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _call(function: str, path: str, kwargs: dict) -> str:
    arguments = "".join(f", {key}={value!r}" for key, value in kwargs.items())
    return f"{function}({path!r}{arguments})"


def _size(count: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if count < 1024 or unit == "GB":
            return f"{count:.0f} {unit}" if unit == "bytes" else f"{count:.1f} {unit}"
        count /= 1024
    return f"{count:.1f} GB"


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:300]


def _fit(report: dict) -> str:
    """The report as one line of JSON under _MAX_REPORT bytes: previews, samples and columns are
    cut, most expendable first, until it fits (and a note says so)."""

    def dumps() -> str:
        return json.dumps(report, ensure_ascii=False, default=str)

    def fits(line: str) -> bool:
        return len(line.encode()) <= _MAX_REPORT - 200

    def shorter_preview(table: dict) -> None:
        preview = table["preview"]
        preview["columns"] = preview["columns"][:20]
        preview["rows"] = [row[:20] for row in preview["rows"][:3]]

    def fewer_samples(table: dict) -> None:
        for column in table["columns"]:
            column["samples"] = column["samples"][:2]

    def no_preview(table: dict) -> None:
        table["preview"] = {"columns": [], "rows": []}

    def fifty_columns(table: dict) -> None:
        table["columns"] = table["columns"][:50]

    def no_samples(table: dict) -> None:
        for column in table["columns"]:
            column["samples"] = []

    def ten_columns(table: dict) -> None:
        table["columns"] = table["columns"][:10]

    line = dumps()
    if fits(line):
        return line
    report["notes"] = [_clip(note, 300) for note in report["notes"][:50]]
    report["sheets"] = report["sheets"][:200] if report["sheets"] else report["sheets"]
    shortened = "the description was shortened to stay small"
    for step in (shorter_preview, fewer_samples, no_preview, fifty_columns, no_samples, ten_columns):
        for table in report["tables"][1:] + report["tables"][:1]:  # the first table last
            step(table)
            line = dumps()
            if fits(line):
                report["notes"].append(shortened)
                return dumps()
    report["notes"].append(shortened)
    while report["tables"] and not fits(dumps()):
        report["tables"].pop()
    return dumps()
