"""What a table's columns hold (dtype, nulls, sample values) and its preview, from a frame of its
first rows; cell values clipped for the report."""

import pandas as pd

from .limits import CELL_CHARS, MAX_COLUMNS, NAME_CHARS, PREVIEW_COLUMNS, SAMPLE_CHARS


def fill_from_frame(table: dict, frame, limits: dict, notes: list) -> None:
    """Columns (dtype, nulls, samples) and the preview, from a frame of the table's first rows."""
    columns = list(frame.columns)
    if len(columns) > MAX_COLUMNS:
        notes.append(
            f"{table['path']}{_sheet_label(table)} has {len(columns)} columns; "
            f"only the first {MAX_COLUMNS} are described"
        )
    described = []
    for index, name in enumerate(columns[:MAX_COLUMNS]):
        column = frame.iloc[:, index]
        described.append(
            {
                "name": clip(name, NAME_CHARS),
                "dtype": str(column.dtype),
                "nulls": int(column.isna().sum()),
                "samples": _samples(column, limits["sample_values"]),
            }
        )
    table["columns"] = described
    table["column_count"] = len(columns)
    head = frame.iloc[: limits["preview_rows"], :PREVIEW_COLUMNS]
    table["preview"] = {
        "columns": [clip(name, CELL_CHARS) for name in head.columns],
        "rows": [
            [clip(value, CELL_CHARS) for value in row] for row in head.itertuples(index=False, name=None)
        ],
    }


def _sheet_label(table: dict) -> str:
    return f" (sheet {table['sheet']!r})" if table.get("sheet") else ""


def _samples(column, count: int) -> list[str]:
    seen = []
    for value in column.dropna().head(1000):
        text = clip(value, SAMPLE_CHARS)
        if text not in seen:
            seen.append(text)
            if len(seen) >= count:
                break
    return seen


def clip(value, limit: int) -> str:
    try:
        if not isinstance(value, (list, dict, tuple, set)) and pd.isna(value):
            return ""
    except (TypeError, ValueError):
        pass
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
