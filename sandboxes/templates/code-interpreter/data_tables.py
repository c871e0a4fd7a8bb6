"""Tables as data: a DataFrame or Series shown (a cell's last expression, display()) carries,
besides pandas' text and HTML, its first rows as a Table Schema data resource
(application/vnd.dataresource+json) with the frame's whole shape, for the page's grid.

    {"schema": {"fields": [{"name": "index", "type": "integer"}, ...], "primaryKey": ["index"]},
     "data": [{"index": 0, ...}, ...], "total_rows": 2500, "total_columns": 3}

At most MAX_ROWS rows and MAX_COLUMNS columns, fewer rows when they would pass BUDGET bytes of
JSON, each text cut to MAX_CHARS. The JSON is always valid: NaN, NaT and None are null, an
infinity is the string "Infinity" or "-Infinity", an integer past 2**53 (which JavaScript
would round) a string; timestamps ISO 8601; bytes and any other object their repr or str.
Anything that goes wrong leaves the table out, never the display.

A table a user variable holds also carries ``"variable": {"name", "token"}``: the token finds
the shown object again (weakly held, in sys.modules[SHOWN_TABLES]), so sandboxd's rows cell
pages the whole frame while that name still holds that very table."""

from __future__ import annotations

import datetime
import json
import math
import secrets
import sys
import types
import weakref
from typing import Any

MIME = "application/vnd.dataresource+json"
MAX_ROWS = 1000
MAX_COLUMNS = 200
MAX_CHARS = 1000
BUDGET = 2 << 20  # a cell may display several tables under sandboxd's 64 MiB of results
EXACT = 2**53
SHOWN_TABLES = "__sandbox_shown_tables__"  # read by sandboxd (server/variables/rows_in_kernel.py)


def register(shell: Any) -> None:
    """Add the formatter to ``shell``'s display formatter, for pandas' DataFrame and Series."""
    import pandas as pd
    from IPython.core.formatters import BaseFormatter
    from traitlets import ObjectName, Unicode

    class DataResourceFormatter(BaseFormatter):  # type: ignore[misc]
        format_type = Unicode(MIME)
        print_method = ObjectName("_repr_analyst_data_resource_")  # pandas' own is not capped
        _return_type = (dict,)

    formatter = DataResourceFormatter(parent=shell.display_formatter)
    shell.display_formatter.formatters[MIME] = formatter
    shown = types.ModuleType(SHOWN_TABLES)
    shown.tables = weakref.WeakValueDictionary()  # type: ignore[attr-defined]
    sys.modules[SHOWN_TABLES] = shown

    def with_variable(data: Any) -> dict[str, Any] | None:
        table = resource(data)
        name = table and _bound_name(shell.user_ns, data)
        if table is not None and name:
            token = secrets.token_hex(12)
            shown.tables[token] = data  # type: ignore[attr-defined]
            table["variable"] = {"name": name, "token": token}
        return table

    formatter.for_type(pd.DataFrame, with_variable)  # (by name it would miss: pandas 3 says "pandas")
    formatter.for_type(pd.Series, with_variable)


def resource(data: Any) -> dict[str, Any] | None:
    """The data resource of a DataFrame or Series, or None when it cannot be made."""
    try:
        return _resource(data)
    except Exception:  # noqa: BLE001  (a table left out, never a display broken)
        return None


def _bound_name(namespace: dict[str, Any], data: Any) -> str | None:
    """The first public user name that holds ``data`` itself, if one does."""
    for name, value in list(namespace.items()):
        if value is data and isinstance(name, str) and name.isidentifier() and not name.startswith("_"):
            return name
    return None


def _resource(data: Any) -> dict[str, Any]:
    import pandas as pd

    frame = data
    if isinstance(data, pd.Series):
        frame = data.to_frame(name="values" if data.name is None else data.name)
    total_rows, total_columns = frame.shape
    shown = frame.iloc[:MAX_ROWS, :MAX_COLUMNS]
    index = shown.index
    names: list[str] = []
    types: list[str] = []
    columns: list[list[Any]] = []
    for level in range(index.nlevels):
        name = index.names[level]
        names.append(_text(name) if name is not None else "index" if index.nlevels == 1 else f"level_{level}")
        values = index.get_level_values(level)
        types.append(_field_type(values.dtype))
        columns.append(values.tolist())
    for position in range(shown.shape[1]):
        label = shown.columns[position]
        names.append(" / ".join(map(_text, label)) if isinstance(label, tuple) else _text(label))
        column = shown.iloc[:, position]
        types.append(_field_type(column.dtype))
        columns.append(column.tolist())
    names = _unique(names)
    fields = [{"name": name, "type": kind} for name, kind in zip(names, types, strict=True)]
    table = {"schema": {"fields": fields, "primaryKey": names[: index.nlevels]}, "data": []}
    table |= {"total_rows": total_rows, "total_columns": total_columns}
    used = len(json.dumps(table))
    for values in zip(*columns, strict=True) if columns else ():
        row = dict(zip(names, map(_cell, values), strict=True))
        used += len(json.dumps(row, allow_nan=False)) + 2
        if used > BUDGET:
            break
        table["data"].append(row)
    return table


def _field_type(dtype: Any) -> str:
    """The Table Schema type of a pandas dtype (what the grid sorts and aligns by)."""
    from pandas.api import types

    if types.is_bool_dtype(dtype):
        return "boolean"
    if types.is_integer_dtype(dtype):
        return "integer"
    if types.is_float_dtype(dtype):
        return "number"
    if types.is_datetime64_any_dtype(dtype):
        return "datetime"
    if types.is_timedelta64_dtype(dtype):
        return "duration"
    if types.is_string_dtype(dtype) and not types.is_object_dtype(dtype):
        return "string"
    return "any"


def _cell(value: Any) -> Any:
    """One value as JSON can hold it exactly (or as text)."""
    import numpy as np
    import pandas as pd

    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        number = int(value)
        return number if -EXACT <= number <= EXACT else str(number)
    if isinstance(value, float | np.floating):
        number = float(value)
        if math.isnan(number):
            return None
        return number if math.isfinite(number) else ("Infinity" if number > 0 else "-Infinity")
    if isinstance(value, str):
        return _cut(value)
    if isinstance(value, bytes | bytearray):
        return _cut(repr(bytes(value)))
    if isinstance(value, np.datetime64 | np.timedelta64) and np.isnat(value):
        return None
    if isinstance(value, np.datetime64):
        return pd.Timestamp(value).isoformat()
    if isinstance(value, datetime.date | datetime.time):  # pd.Timestamp too
        return value.isoformat()
    return _cut(_text(value))


def _text(value: Any) -> str:
    try:
        return str(value)
    except Exception:  # noqa: BLE001
        try:
            return repr(value)
        except Exception:  # noqa: BLE001
            return f"<{type(value).__name__}>"


def _cut(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1] + "…"


def _unique(names: list[str]) -> list[str]:
    """Field names made distinct (a repeated column, an index named as a column): "a", "a (2)"."""
    seen: set[str] = set()
    unique = []
    for name in names:
        candidate, count = name, 1
        while candidate in seen:
            count += 1
            candidate = f"{name} ({count})"
        seen.add(candidate)
        unique.append(candidate)
    return unique
