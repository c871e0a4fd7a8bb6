"""A table as a model in schema mode reads it: shape, column types and numeric summaries, no row.
Made from the Table Schema data resource a displayed DataFrame or Series carries (the sandbox
template's data_tables.py), which is the kernel's, so untrusted: read with care, bounded."""

from __future__ import annotations

import math
from typing import Any

MAX_COLUMNS = 50
NUMERIC = ("integer", "number")


def table_summary(resource: Any) -> str | None:
    """The summary of a data resource, or None when it is not one."""
    if not isinstance(resource, dict) or not isinstance(resource.get("schema"), dict):
        return None
    fields = resource["schema"].get("fields")
    rows = resource.get("data")
    if not isinstance(fields, list) or not isinstance(rows, list):
        return None
    keys = resource["schema"].get("primaryKey")
    index = set(keys) if isinstance(keys, list) else set()
    columns = [f for f in fields if isinstance(f, dict) and isinstance(f.get("name"), str)]
    data_columns = [f for f in columns if f["name"] not in index]
    total_rows = _count(resource.get("total_rows"), len(rows))
    total_columns = _count(resource.get("total_columns"), len(data_columns))
    described = [_column(f, rows) for f in data_columns[:MAX_COLUMNS]]
    shape = (
        f"{total_rows:,} row{'s' * (total_rows != 1)} x {total_columns:,} column{'s' * (total_columns != 1)}"
    )
    text = f"[a table of {shape}; its rows are withheld from you]"
    if described:
        text += "\nColumns: " + "; ".join(described)
    if len(rows) < total_rows:
        text += f"\n(numeric summaries are over the first {len(rows):,} rows)"
    return text


def _column(field: dict[str, Any], rows: list[Any]) -> str:
    name, kind = field["name"][:100], str(field.get("type", "any"))[:20]
    if kind not in NUMERIC:
        return f"{name} ({kind})"
    numbers = [
        value
        for row in rows
        if isinstance(row, dict)
        for value in [row.get(field["name"])]
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    ]
    if not numbers:
        return f"{name} ({kind})"
    total = sum(numbers)
    figures = f"min {_number(min(numbers))}, max {_number(max(numbers))}"
    return f"{name} ({kind}: {figures}, mean {_number(total / len(numbers))}, sum {_number(total)})"


def _number(value: float) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:,.6g}"


def _count(value: Any, fallback: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else fallback
