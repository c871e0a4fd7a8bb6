"""CSV, TSV and other delimited text: the delimiter sniffed, the number style and the header found
in a sample, the read_csv call built and proven on it, and the rows of a larger file counted."""

import codecs
import collections
import csv
import io
import os
import re

import pandas as pd

from .columns import fill_from_frame
from .encodings import chosen_encoding, decode_head, encoding_after_bad_byte
from .headers import header_position
from .limits import CSV_SAMPLE_BYTES_FACTOR
from .line_count import count_lines
from .report import Refused, empty_table, human_size, reason
from .sources import load_call, open_bytes


def csv_table(path, compression, load_compression, *, options, limits, budget, notes) -> dict:
    """One delimited-text table: detect, build the read_csv call, prove it on the sample, and
    count the rows of a file larger than the sample."""
    table = empty_table(path)
    head, extra, whole = _text_samples(path, compression, limits["sample_bytes"])
    encoding = chosen_encoding(options.get("encoding"), head, extra)
    layout = _csv_layout(head, encoding, whole, options)
    count = None
    if not whole:  # the pass over every byte also proves the encoding (an accented char at 900 MB)
        prove = (head + extra).isascii()
        count = count_lines(path, compression, encoding, budget, blanks=layout["blanks"], prove_utf8=prove)
        if count["bad_offset"] is not None and not options.get("encoding"):
            encoding = encoding_after_bad_byte(path, compression, count, head, notes)
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
        100, min(limits["sample_rows"], limits["sample_bytes"] * CSV_SAMPLE_BYTES_FACTOR // line_bytes)
    )
    frame, kwargs = _read_csv_checked(path, kwargs, nrows, encoding, notes)
    table["load"] = load_call("pd.read_csv", path, kwargs)
    fill_from_frame(table, frame, limits, notes)
    if len(frame) < nrows:
        table["rows"] = len(frame)  # the whole file was read: exact
        return table
    table["sampled"], table["sample_rows"] = True, nrows
    if count is None:
        count = count_lines(path, compression, encoding, budget, blanks=layout["blanks"])
    blank = count["blank"] - (layout["blank_skipped"] if layout["blanks"] else 0)
    rows = count["lines"] - blank - layout["skip"] - (1 if layout["header"] else 0)
    if count["bytes_read"] < count["size"]:
        rows = int(rows * count["size"] / max(1, count["bytes_read"]))
        table["rows_exact"] = False
        notes.append(
            f"rows of {path} are estimated: counting every line would take longer than the time budget, "
            f"so the count of the first {human_size(count['bytes_read'])} is scaled to the whole file"
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
    text = decode_head(head, encoding, whole)
    if "\n" not in text and "\r" in text:
        text = text.replace("\r", "\n")  # old Mac line ends: pandas reads them; sniff them alike
    delimiter = _chosen_delimiter(options.get("delimiter"), text, whole)
    records = _records(text, delimiter, whole)
    start, header = header_position(records, lambda value: value, options.get("header_row"))
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
    file = open_bytes(path, compression)
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


def _chosen_delimiter(option, text: str, whole: bool) -> str:
    if option:
        option = {"\\t": "\t", "tab": "\t", "TAB": "\t"}.get(str(option), str(option))
        if len(option) != 1 or option in '\r\n"':
            raise Refused(f"{option!r} cannot be a delimiter: give one character such as , ; | or tab")
        return option
    return sniff_delimiter(text, whole)[0]


def sniff_delimiter(text: str, whole: bool) -> tuple[str, bool]:
    """The delimiter that splits the sample's lines most consistently into two or more fields,
    and whether any did. Comma loses ties: it is the one most often found inside values."""
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
        raise Refused(f"{option!r} cannot be a decimal mark: give . or ,")
    return str(option)


def _read_csv_checked(path: str, kwargs: dict, nrows: int, encoding: str, notes: list):
    """Read the sample with exactly the load call's arguments (plus nrows), so the call we
    report is one that works. Lines with too many fields are skipped, and that is said."""
    try:
        return pd.read_csv(path, nrows=nrows, **kwargs), kwargs
    except UnicodeDecodeError as exc:
        raise Refused(
            f"the file is not {encoding}: byte 0x{exc.object[exc.start]:02x} cannot be decoded "
            "(choose another encoding)"
        ) from None
    except pd.errors.EmptyDataError:
        raise Refused("it holds no table: no columns were found") from None
    except pd.errors.ParserError as exc:
        match = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(exc))
        if not match:
            raise Refused(f"it could not be parsed as delimited text: {reason(exc)}") from None
        expected, line, saw = match.groups()
        kwargs = {**kwargs, "on_bad_lines": "skip"}
        notes.append(
            f"line {line} of {path} has {saw} fields where {expected} were expected; "
            "such lines are skipped (on_bad_lines='skip')"
        )
        return pd.read_csv(path, nrows=nrows, **kwargs), kwargs
