"""How a file's tables are named in what the user sets per table and column (the data dictionary,
column marks): "" for a file that is its one table, else the sheet's name, else the member's path
(a zip's)."""

from __future__ import annotations

from typing import Any

from analyst.models import DataFile


def table_key(file_path: str, table: dict[str, Any]) -> str:
    if table.get("sheet"):
        return str(table["sheet"])
    path = str(table.get("path") or "")
    return "" if path in ("", file_path) else path


def known_columns(data_file: DataFile) -> dict[str, list[str]]:
    """Each table of the file (by key, in the sandbox's order) and its columns' names, as the
    sandbox described them: nothing for a file not yet (or never) read."""
    known: dict[str, list[str]] = {}
    for table in (data_file.description or {}).get("tables", []):
        if isinstance(table, dict):
            columns = table.get("columns") or []
            names = [str(c["name"]) for c in columns if isinstance(c, dict) and c.get("name")]
            known.setdefault(table_key(data_file.path, table), names)
    return known
