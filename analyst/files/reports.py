"""What the sandbox says about an uploaded file, checked, and told to the model.

The describer (analyst/files/inside_sandbox/describe.py) runs inside the session's sandbox, next to
code the model wrote, so its report is untrusted input: ``checked`` keeps only the fields we
know, of the types we expect, cut to sizes we chose. ``summary`` writes what the model reads.
"""

from __future__ import annotations

import json
from typing import Any

from analyst.models import DataFile

MAX_REPORT = 1 << 20
MAX_TABLES = 100
MAX_COLUMNS = 200
MAX_PREVIEW_ROWS = 20
MAX_PREVIEW_COLUMNS = 50
MAX_NOTES = 20
MAX_VALUES = 2_000  # distinct text values kept per table (the describer's "text_values")
VALUE_CHARS = 100
FORMATS = {"csv", "excel", "parquet", "json", "jsonl", "feather", "zip"}
COMPRESSIONS = {"gzip", "zip"}
DETECTED = ("encoding", "delimiter", "decimal", "thousands", "header_row", "sheet")
FORMAT_NAMES = {
    "csv": "text table",
    "excel": "Excel workbook",
    "parquet": "Parquet",
    "json": "JSON",
    "jsonl": "JSON lines",
    "feather": "Arrow/Feather",
    "zip": "zip archive",
}


def checked(output: str) -> dict[str, Any]:
    """The describer's report (the last line it printed), kept to what we expect; a report
    that is missing or malformed becomes one whose ``error`` says so."""
    line = output.strip().rsplit("\n", 1)[-1] if output.strip() else ""
    if not line:
        return failed("the sandbox sent no description of it")
    if len(line) > MAX_REPORT:
        return failed("the sandbox's description of it was too large")
    try:
        report = json.loads(line)
    except ValueError:
        return failed("the sandbox's description of it was not readable")
    if not isinstance(report, dict):
        return failed("the sandbox's description of it was not readable")
    tables = report.get("tables")
    return {
        "format": _choice(report.get("format"), FORMATS),
        "compression": _choice(report.get("compression"), COMPRESSIONS),
        "sheets": _texts(report.get("sheets"), 500, 100) if report.get("sheets") is not None else None,
        "tables": [_table(t) for t in tables[:MAX_TABLES] if isinstance(t, dict)]
        if isinstance(tables, list)
        else [],
        "notes": _texts(report.get("notes"), MAX_NOTES, 300),
        "error": _text(report.get("error"), 1000) or None,
    }


def failed(reason: str) -> dict[str, Any]:
    """A description for a file the describer could not be run on, or whose report is unusable."""
    return {"format": None, "compression": None, "sheets": None, "tables": [], "notes": [], "error": reason}


def _table(raw: dict[str, Any]) -> dict[str, Any]:
    columns = raw.get("columns") if isinstance(raw.get("columns"), list) else []
    preview = raw.get("preview") if isinstance(raw.get("preview"), dict) else {}
    preview_rows = preview.get("rows") if isinstance(preview.get("rows"), list) else []
    detected = raw.get("detected") if isinstance(raw.get("detected"), dict) else {}
    return {
        "path": _text(raw.get("path"), 500),
        "sheet": _text(raw.get("sheet"), 100) or None,
        "rows": _count(raw.get("rows")),
        "rows_exact": raw.get("rows_exact") is not False,
        "sampled": raw.get("sampled") is True,
        "sample_rows": _count(raw.get("sample_rows")),
        "columns": [_column(c) for c in columns[:MAX_COLUMNS] if isinstance(c, dict)],
        "column_count": _count(raw.get("column_count")) or len(columns),
        "detected": {
            key: (_count(value) if key == "header_row" and value != "none" else _text(value, 40))
            for key, value in detected.items()
            if key in DETECTED and value is not None
        },
        "load": _text(raw.get("load"), 500),
        "preview": {
            "columns": _texts(preview.get("columns"), MAX_PREVIEW_COLUMNS, 100),
            "rows": [_texts(row, MAX_PREVIEW_COLUMNS, 100) for row in preview_rows[:MAX_PREVIEW_ROWS]],
        },
        "values": _values(raw.get("values")),
        "error": _text(raw.get("error"), 1000) or None,
    }


def _column(raw: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": _text(raw.get("name"), 100),
        "dtype": _text(raw.get("dtype"), 40),
        "nulls": _count(raw.get("nulls")),
        "samples": _texts(raw.get("samples"), 5, 60),
    }


def _values(raw: Any) -> dict[str, list[str]]:
    """The distinct text values by column, MAX_VALUES in all (what the model is kept from)."""
    values: dict[str, list[str]] = {}
    room = MAX_VALUES
    for name, items in list(raw.items())[:MAX_COLUMNS] if isinstance(raw, dict) else []:
        if isinstance(items, list) and room > 0:
            kept = [_text(item, VALUE_CHARS) for item in items[:room] if isinstance(item, str)]
            values[_text(name, 100)] = kept
            room -= len(kept)
    return values


def _choice(value: Any, allowed: set[str]) -> str | None:
    return value if isinstance(value, str) and value in allowed else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _text(value: Any, limit: int) -> str:
    if value is None or isinstance(value, (dict, list)):
        return ""
    return "".join(c if c.isprintable() or c == "\t" else "\ufffd" for c in str(value)[:limit])


def _texts(value: Any, count: int, limit: int) -> list[str]:
    return [_text(item, limit) for item in value[:count]] if isinstance(value, list) else []


def first_table_shape(description: dict[str, Any]) -> tuple[int | None, int | None]:
    """Rows and columns of the file's first readable table (the files panel's one-line shape)."""
    for table in description.get("tables", []):
        if not table["error"]:
            return table["rows"], table["column_count"]
    return None, None


def summary(path: str, description: dict[str, Any], *, rows_shown: bool = True) -> str:
    """What the model is told about the file: how to load each table, its shape and columns; with
    ``rows_shown`` False, no value of a row (no preview, no sample values)."""
    kind = FORMAT_NAMES.get(description.get("format") or "", "file")
    if description.get("compression") == "gzip":
        kind = f"gzip-compressed {kind}"
    head = f"{path} ({kind})"
    if description.get("sheets"):
        head += f", sheets: {', '.join(description['sheets'])}"
    if description.get("error"):
        return f"{head}: could not be read as a table: {description['error']}"
    tables = description.get("tables", [])
    if len(tables) == 1 and tables[0]["path"] == path and not tables[0]["sheet"]:
        parts = [f"{head}: {_table_summary(tables[0], rows_shown)}"]  # the file is its one table
    else:
        parts = [f"{head}:", *(f"- {_where(path, t)}: {_table_summary(t, rows_shown)}" for t in tables)]
    parts += [f"Note: {note}" for note in description.get("notes", [])]
    return "\n".join(parts)


def _where(path: str, table: dict[str, Any]) -> str:
    if table["sheet"]:
        return (
            f"sheet {table['sheet']!r}"
            if table["path"] == path
            else f"{table['path']}, sheet {table['sheet']!r}"
        )
    return table["path"]


def _table_summary(table: dict[str, Any], rows_shown: bool) -> str:
    if table["error"]:
        return f"could not be read: {table['error']}"
    rows = table["rows"]
    shown_rows = "?" if rows is None else f"{rows:,}" if table["rows_exact"] else f"about {rows:,}"
    lines = [f"{shown_rows} rows x {table['column_count']} columns."]
    detected = ", ".join(f"{key} {value!r}" for key, value in table["detected"].items() if key != "sheet")
    if detected:
        lines.append(f"  Detected: {detected}.")
    if table["load"]:
        lines.append(f"  Load it with: {table['load']}")
    if table["sampled"] and table["sample_rows"]:
        lines.append(f"  (Types and null counts are from the first {table['sample_rows']:,} rows.)")
    described = "; ".join(_column_summary(c, rows_shown) for c in table["columns"])
    if described:
        lines.append(f"  Columns: {described}.")
    if table["column_count"] > len(table["columns"]):
        lines.append(f"  (and {table['column_count'] - len(table['columns'])} more columns)")
    preview = table["preview"]
    if preview["rows"] and rows_shown:
        lines.append("  First rows:")
        lines += ["  " + " | ".join(row) for row in [preview["columns"], *preview["rows"][:5]]]
    return "\n".join(lines)


def _column_summary(column: dict[str, Any], rows_shown: bool) -> str:
    text = f"{column['name']} ({column['dtype']}"
    if column["nulls"]:
        text += f", {column['nulls']:,} empty"
    text += ")"
    if column["samples"] and rows_shown:
        text += " e.g. " + ", ".join(column["samples"][:3])
    return text


def upload_entry(data_file: DataFile) -> dict[str, object]:
    """An upload as the API, the files panel and the ``file_added`` event show it."""
    description = data_file.description or {}
    return {
        "id": data_file.id,
        "kind": "upload",
        "name": data_file.name,
        "path": data_file.path,
        "size": data_file.size,
        "status": data_file.placement,
        "error": data_file.placement_error,
        "rows": data_file.rows,
        "columns": data_file.columns,
        "summary": data_file.summary,
        "format": description.get("format"),
        "compression": description.get("compression"),
        "sheets": description.get("sheets"),
        "tables": [_without_values(t) for t in description.get("tables", [])],
        "notes": description.get("notes", []),
        "read_error": description.get("error") or "",
        "options": data_file.read_options,
        "column_marks": data_file.column_marks,
        "proposed_marks": data_file.proposed_marks,
        "dictionary": data_file.dictionary,
    }


def _without_values(table: dict[str, Any]) -> dict[str, Any]:
    """A table as the page shows it: its kept text values stay on the worker's side."""
    return {key: value for key, value in table.items() if key != "values"}
