"""What a table's columns hold (dtype, nulls, sample values), its preview, and the distinct values
of its text columns (what the worker keeps from the model, analyst.trust.privacy), from a frame
of its first rows; cell values clipped for the report."""

import pandas as pd

from .limits import CELL_CHARS, MAX_COLUMNS, NAME_CHARS, PREVIEW_COLUMNS, SAMPLE_CHARS, VALUE_CHARS


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
    table["values"] = text_values(frame.iloc[:, :MAX_COLUMNS], limits["text_values"])
    table["column_count"] = len(columns)
    head = frame.iloc[: limits["preview_rows"], :PREVIEW_COLUMNS]
    table["preview"] = {
        "columns": [clip(name, CELL_CHARS) for name in head.columns],
        "rows": [
            [clip(value, CELL_CHARS) for value in row] for row in head.itertuples(index=False, name=None)
        ],
    }


def text_values(frame, budget: int) -> dict:
    """Distinct values of the frame's text columns, by column name: at most ``budget`` in all,
    shared out between the columns. Values shorter than 3 characters are left out (they would
    match inside any word), and longer than VALUE_CHARS (free text, found whole in no output)."""
    texts = [i for i in range(frame.shape[1]) if _is_text(frame.iloc[:, i])]
    if not texts:
        return {}
    share = max(1, budget // len(texts))
    values = {}
    for index in texts:
        seen = dict.fromkeys(
            value.strip()
            for value in frame.iloc[:, index].dropna()
            if isinstance(value, str) and 3 <= len(value.strip()) <= VALUE_CHARS
        )
        values[clip(frame.columns[index], NAME_CHARS)] = list(seen)[:share]
    return values


def _is_text(column) -> bool:
    return pd.api.types.is_object_dtype(column.dtype) or pd.api.types.is_string_dtype(column.dtype)


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
