"""The reports the inspector cell prints (in_kernel.py), read as what they are: kernel output.

The user's code may have patched anything the cell uses (json, print, sorted, pandas...), so a
report is checked field by field and rebuilt from what passed: one of the wrong shape, or past
the limits below, raises Malformed; it never reaches a caller as it came.
"""

from __future__ import annotations

import json
import math
from typing import Any

from sandboxes.server.snapshots.state_report import PRINTABLE, Malformed, message, name
from sandboxes.server.variables import in_kernel

MAX_VARIABLES = in_kernel.MAX_VARIABLES
MAX_TYPE_CHARS = in_kernel.MAX_TYPE_CHARS
MAX_DIMENSIONS = 32  # numpy's own limit
MAX_ROWS = in_kernel.PREVIEW_ROWS
MAX_FIELDS = in_kernel.PREVIEW_COLUMNS + 1  # and the index
MAX_FIELD_CHARS = in_kernel.MAX_NAME_CHARS
MAX_CELL_CHARS = 200  # a cut string's 100, or a date's ISO text
FIELD_TYPES = frozenset({"integer", "number", "boolean", "datetime", "duration", "string", "any"})

__all__ = ["MAX_VARIABLES", "Malformed", "parse", "variables", "preview"]


def parse(stdout: str) -> object:
    """The JSON of the last report line in ``stdout``; Malformed if there is none or it is not JSON."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(in_kernel.REPORT_PREFIX):
            try:
                return json.loads(line[len(in_kernel.REPORT_PREFIX) :])
            except (ValueError, RecursionError) as exc:
                raise Malformed(f"not JSON ({exc})") from None
    raise Malformed("the kernel gave no report")


def variables(report: object) -> dict[str, Any]:
    """{"variables": [...], "total"} rebuilt from a checked ``variables()`` report."""
    if not isinstance(report, dict) or frozenset(report) != {"variables", "total"}:
        raise Malformed("unexpected fields")
    listed = report["variables"]
    if not isinstance(listed, list) or len(listed) > MAX_VARIABLES:
        raise Malformed(f"a list of at most {MAX_VARIABLES} variables was expected")
    checked = [variable(item) for item in listed]
    total = count(report["total"])
    if total < len(checked):
        raise Malformed("fewer variables in total than listed")
    return {"variables": checked, "total": total}


def variable(item: object) -> dict[str, Any]:
    keys = {"name", "type", "shape", "length", "size", "table"}
    if not isinstance(item, dict) or not keys <= frozenset(item) <= keys | {"approximate"}:
        raise Malformed("a variable has unexpected fields")
    return {
        "name": name(item["name"]),
        "type": text(item["type"], MAX_TYPE_CHARS),
        "shape": shape(item["shape"]),
        "length": optional_count(item["length"]),
        "size": optional_count(item["size"]),
        "approximate": flag(item.get("approximate", False)),
        "table": flag(item["table"]),
    }


def preview(report: object) -> dict[str, Any] | None:
    """{"table": {"schema": {"fields"}, "data"}, "total_rows", "total_columns"} rebuilt from a
    checked ``preview()`` report; None for {"error": "not_found"} (no such table)."""
    if isinstance(report, dict) and report.get("error") == "not_found" and len(report) == 1:
        return None
    if isinstance(report, dict) and report.get("error") == "failed" and set(report) == {"error", "message"}:
        raise Malformed(f"the table could not be read: {message(report['message'])}")
    if not isinstance(report, dict) or frozenset(report) != {"table", "total_rows", "total_columns"}:
        raise Malformed("unexpected fields")
    table = report["table"]
    if not isinstance(table, dict) or frozenset(table) != {"schema", "data"}:
        raise Malformed("a table is a schema and its data")
    schema = table["schema"]
    if not isinstance(schema, dict) or frozenset(schema) != {"fields"}:
        raise Malformed("a schema is a list of fields")
    fields = checked_fields(schema["fields"])
    names = [field["name"] for field in fields]
    rows = table["data"]
    if not isinstance(rows, list) or len(rows) > MAX_ROWS:
        raise Malformed(f"at most {MAX_ROWS} rows were expected")
    data = [row_of(row, names) for row in rows]
    return {
        "table": {"schema": {"fields": fields}, "data": data},
        "total_rows": count(report["total_rows"]),
        "total_columns": count(report["total_columns"]),
    }


def checked_fields(fields: object) -> list[dict[str, str]]:
    if not isinstance(fields, list) or not fields or len(fields) > MAX_FIELDS:
        raise Malformed(f"from 1 to {MAX_FIELDS} fields were expected")
    checked = []
    for field in fields:
        if not isinstance(field, dict) or not isinstance(field.get("name"), str):
            raise Malformed("a field is an object with a name")
        kind = field.get("type")
        kind = kind if kind in FIELD_TYPES else "any"
        checked.append({"name": text(field["name"], MAX_FIELD_CHARS), "type": kind})
    if len({field["name"] for field in checked}) != len(checked):
        raise Malformed("two fields of one name")
    return checked


def row_of(row: object, names: list[str]) -> dict[str, Any]:
    if not isinstance(row, dict) or not frozenset(row) <= frozenset(names):
        raise Malformed("a row holds fields the schema does not")
    return {key: cell(row.get(key)) for key in names}


def cell(value: object) -> str | int | float | bool | None:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if not -(1 << 63) <= value < 1 << 64:
            raise Malformed("an integer past 64 bits")
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return text(value, MAX_CELL_CHARS)
    raise Malformed("a cell is a string, a number, a boolean or null")


def text(value: object, limit: int) -> str:
    if not isinstance(value, str) or len(value) > limit or not PRINTABLE.fullmatch(value):
        raise Malformed(f"printable text of at most {limit} characters was expected")
    return value


def shape(value: object) -> list[int] | None:
    if value is None:
        return None
    if not isinstance(value, list) or len(value) > MAX_DIMENSIONS:
        raise Malformed(f"a shape is a list of at most {MAX_DIMENSIONS} sizes")
    return [count(n) for n in value]


def optional_count(value: object) -> int | None:
    return None if value is None else count(value)


def count(value: object) -> int:
    """A whole number from 0 below 2**63 (a size, a length, a count of rows)."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 1 << 63:
        raise Malformed("a size must be a whole number below 2**63")
    return value


def flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise Malformed("true or false was expected")
    return value
