"""The reports of the rows cell (rows_in_kernel.py), checked as kernel output: a report of the
wrong shape or past these limits raises Malformed; a refusal the cell says becomes its error."""

from __future__ import annotations

import json
import math
from typing import Any

from sandboxes.errors import FileTooLarge, InspectionFailed, InvalidRequest, VariableNotFound
from sandboxes.server.snapshots.state_report import PRINTABLE, Malformed, message
from sandboxes.server.variables import rows_in_kernel
from sandboxes.server.variables.report import FIELD_TYPES, count

MAX_ROWS = rows_in_kernel.MAX_LIMIT
MAX_COLUMNS = rows_in_kernel.MAX_COLUMNS + 16  # and the index's levels
MAX_NAME_CHARS = rows_in_kernel.MAX_NAME_CHARS + 8  # and a " (2)" that makes it unique
MAX_CELL_CHARS = rows_in_kernel.MAX_CHARS
REFUSALS = {"not_found": VariableNotFound, "bad_request": InvalidRequest, "too_large": FileTooLarge}


def parse(stdout: str) -> object:
    """The JSON of the last report line in ``stdout``; Malformed if there is none or it is not JSON."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(rows_in_kernel.REPORT_PREFIX):
            try:
                return json.loads(line[len(rows_in_kernel.REPORT_PREFIX) :])
            except (ValueError, RecursionError) as exc:
                raise Malformed(f"not JSON ({exc})") from None
    raise Malformed("the kernel gave no report")


def refusal(report: object) -> None:
    """Raise what a report of {"error", "message"} says: VariableNotFound, InvalidRequest, or
    FileTooLarge, or InspectionFailed (too slow, or pandas failed on the data)."""
    if not isinstance(report, dict) or "error" not in report:
        return
    if set(report) != {"error", "message"} or not isinstance(report["error"], str):
        raise Malformed("unexpected fields")
    said = message(report["message"])
    raise REFUSALS.get(report["error"], InspectionFailed)(said)


def page(report: object) -> dict[str, Any]:
    """{"total_rows", "all_rows", "offset", "columns", "rows"} rebuilt from a checked page."""
    refusal(report)
    keys = {"total_rows", "all_rows", "offset", "columns", "rows"}
    if not isinstance(report, dict) or frozenset(report) != keys:
        raise Malformed("unexpected fields")
    columns = _columns(report["columns"])
    rows = report["rows"]
    if not isinstance(rows, list) or len(rows) > MAX_ROWS:
        raise Malformed(f"at most {MAX_ROWS} rows were expected")
    checked = [_row(row, len(columns)) for row in rows]
    total = count(report["total_rows"])
    if total > count(report["all_rows"]):
        raise Malformed("more rows match than the table holds")
    return {
        "total_rows": total,
        "all_rows": report["all_rows"],
        "offset": count(report["offset"]),
        "columns": columns,
        "rows": checked,
    }


def written(report: object) -> dict[str, int]:
    """{"rows", "bytes"} of a checked CSV report."""
    refusal(report)
    if not isinstance(report, dict) or frozenset(report) != {"rows", "bytes"}:
        raise Malformed("unexpected fields")
    return {"rows": count(report["rows"]), "bytes": count(report["bytes"])}


def _columns(columns: object) -> list[dict[str, str]]:
    if not isinstance(columns, list) or len(columns) > MAX_COLUMNS:
        raise Malformed(f"at most {MAX_COLUMNS} columns were expected")
    checked = []
    for column in columns:
        if not isinstance(column, dict) or frozenset(column) != {"name", "type"}:
            raise Malformed("a column is its name and type")
        name = column["name"]
        if not isinstance(name, str) or len(name) > MAX_NAME_CHARS or not PRINTABLE.fullmatch(name):
            raise Malformed(f"a column's name is printable text of at most {MAX_NAME_CHARS} characters")
        kind = column["type"] if column["type"] in FIELD_TYPES else "any"
        checked.append({"name": name, "type": kind})
    if len({column["name"] for column in checked}) != len(checked):
        raise Malformed("two columns of one name")
    return checked


def _row(row: object, width: int) -> list[Any]:
    if not isinstance(row, list) or len(row) != width:
        raise Malformed("a row holds one value for each column")
    return [_cell(value) for value in row]


def _cell(value: object) -> str | int | float | bool | None:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if not -(1 << 53) <= value <= 1 << 53:
            raise Malformed("an integer past 2**53 comes as text")
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str) and len(value) <= MAX_CELL_CHARS:
        return value
    raise Malformed(f"a cell is a number, a boolean, null or at most {MAX_CELL_CHARS} characters of text")
