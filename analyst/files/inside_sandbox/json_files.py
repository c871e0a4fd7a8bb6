"""JSON files: a document of records or columns (or records under one key), read whole or, when
large, from records parsed off its head; JSON Lines, read like delimited text."""

import json
import os

import pandas as pd

from .columns import fill_from_frame
from .encodings import chosen_encoding, decode_head, detect_encoding
from .limits import JSON_WHOLE_BYTES
from .line_count import count_lines
from .report import Refused, empty_table, human_size, reason
from .sources import load_call, open_bytes


def json_table(path, compression, load_compression, *, limits, notes) -> dict:
    table = empty_table(path)
    with open_bytes(path, compression) as file:
        head = file.read(limits["sample_bytes"])
    encoding = detect_encoding(head, b"")
    kwargs = {} if encoding in ("utf-8",) else {"encoding": encoding}
    if load_compression:
        kwargs["compression"] = load_compression
    text = decode_head(head, encoding, True).lstrip()
    if os.path.getsize(path) > JSON_WHOLE_BYTES and text.startswith("["):
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
            raise Refused(
                "it is not JSON that makes a table (a list of records or an object of columns): "
                f"{reason(exc)}"
            ) from None
        load = load_call("pd.read_json", path, kwargs)
    table["load"] = load
    table["detected"] = {"encoding": encoding}
    table["rows"] = len(frame)
    fill_from_frame(table, frame, limits, notes)
    return table


def _json_value(path: str, compression: str | None, encoding: str):
    """The whole JSON document (parsed once; it is at most JSON_WHOLE_BYTES)."""
    with open_bytes(path, compression) as file:
        try:
            return json.loads(file.read().decode(encoding))
        except (ValueError, UnicodeDecodeError) as exc:
            raise Refused(f"it is not valid JSON: {reason(exc)}") from None


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
        raise Refused("its first records could not be parsed as JSON")
    frame = pd.DataFrame.from_records(records) if isinstance(records[0], dict) else pd.DataFrame(records)
    table["load"] = load_call("pd.read_json", path, kwargs)
    table["rows"] = int(len(records) * os.path.getsize(path) / max(1, len(text[:at].encode())))
    table["rows_exact"], table["sampled"], table["sample_rows"] = False, True, len(records)
    notes.append(
        f"rows of {path} are estimated: it is too large to parse whole here, so its first "
        f"{len(records)} records were read and the rest reckoned from its size"
    )
    fill_from_frame(table, frame, limits, notes)
    return table


def jsonl_table(path, compression, load_compression, *, options, limits, budget, notes) -> dict:
    table = empty_table(path)
    with open_bytes(path, compression) as file:
        head = file.read(limits["sample_bytes"] + 1)
    whole = len(head) <= limits["sample_bytes"]
    encoding = chosen_encoding(options.get("encoding"), head[: limits["sample_bytes"]], b"")
    kwargs = {"lines": True}
    if encoding != "utf-8":
        kwargs["encoding"] = encoding
    if load_compression:
        kwargs["compression"] = load_compression
    nrows = limits["sample_rows"]
    try:
        frame = pd.read_json(path, nrows=nrows, **kwargs)
    except ValueError as exc:
        raise Refused(f"it is not JSON Lines (one JSON object per line): {reason(exc)}") from None
    table["load"] = load_call("pd.read_json", path, kwargs)
    table["detected"] = {"encoding": encoding}
    fill_from_frame(table, frame, limits, notes)
    if whole or len(frame) < nrows:
        table["rows"] = len(frame)
        return table
    table["sampled"], table["sample_rows"] = True, nrows
    count = count_lines(path, compression, encoding, budget)
    rows = count["lines"] - count["blank"]
    if count["bytes_read"] < count["size"]:
        rows = int(rows * count["size"] / max(1, count["bytes_read"]))
        table["rows_exact"] = False
        notes.append(
            f"rows of {path} are estimated from the first {human_size(count['bytes_read'])}: "
            "counting every line took longer than the time budget"
        )
    table["rows"] = max(rows, len(frame))
    return table
