"""An upload's data dictionary: what the user says the file, each of its tables and each column
hold ("amount: net revenue in EUR, before VAT"), checked against what the sandbox found in the
file, and told to the model beside the file's summary.

Its shape is DataFile.dictionary's: ``{"file": "…", "tables": {"<table>": {"text": "…",
"columns": {"<column>": "…"}}}}``, tables named as analyst.trust.tables names them. Empty
descriptions are left out, so an empty dictionary is ``{}``.
"""

from __future__ import annotations

from typing import Any

from analyst.models import DataFile
from analyst.trust.tables import known_columns

MAX_TEXT = 1000  # characters in one description
MAX_TOTAL = 20_000  # in a file's whole dictionary: it goes into every system prompt of the session


class BadDictionary(ValueError):
    """The dictionary is malformed, too long, or names a table or column the file does not have."""


def do_set(*, data_file: DataFile, dictionary: object) -> DataFile:
    """Replace the file's dictionary whole with ``dictionary``, checked (BadDictionary)."""
    data_file.dictionary = check(data_file, dictionary)
    # Only this field: a reading of the file may be saving its description meanwhile.
    DataFile.objects.filter(id=data_file.id).update(dictionary=data_file.dictionary)
    return data_file


def check(data_file: DataFile, dictionary: object) -> dict[str, Any]:
    """``dictionary`` with its texts trimmed and the empty ones left out; BadDictionary unless it
    has the dictionary's shape, names only tables and columns the file has, and fits the limits."""
    if not isinstance(dictionary, dict):
        raise BadDictionary('the dictionary must be an object: {"file": "…", "tables": {…}}')
    only_fields(dictionary, {"file", "tables"}, "the dictionary")
    checked: dict[str, Any] = {}
    if text := _text(dictionary.get("file", ""), f"the description of {data_file.name}"):
        checked["file"] = text
    tables = dictionary.get("tables", {})
    if not isinstance(tables, dict):
        raise BadDictionary(
            "'tables' must be an object of the file's tables by name ('' for a file of one table)"
        )
    known = known_columns(data_file)
    checked_tables = {}
    for key, table in tables.items():
        if key not in known:
            raise BadDictionary(f"{data_file.name} has no table {key!r}; {_tables_named(known)}")
        if described := check_table(key, table, known[key]):
            checked_tables[key] = described
    if checked_tables:
        checked["tables"] = checked_tables
    check_total(checked, "per file")
    return checked


def check_total(dictionary: dict[str, Any], per: str) -> None:
    """BadDictionary when the checked ``dictionary`` holds more than MAX_TOTAL characters."""
    total = sum(len(text) for text in _texts(dictionary))
    if total > MAX_TOTAL:
        raise BadDictionary(
            f"the dictionary holds {total:,} characters; at most {MAX_TOTAL:,} are allowed {per}"
        )


def check_table(key: str, table: object, columns: list[str]) -> dict[str, Any]:
    """One table's descriptions, checked: {"text"?, "columns"?} with the empty ones left out."""
    where = f"table {key!r}" if key else "the table"
    if not isinstance(table, dict):
        raise BadDictionary(f'{where} must be an object: {{"text": "…", "columns": {{…}}}}')
    only_fields(table, {"text", "columns"}, where)
    described: dict[str, Any] = {}
    if text := _text(table.get("text", ""), f"the description of {where}"):
        described["text"] = text
    given = table.get("columns", {})
    if not isinstance(given, dict):
        raise BadDictionary(f"the columns of {where} must be an object of descriptions by column name")
    named = {}
    for name, text in given.items():
        if name not in columns:
            raise BadDictionary(f"{where} has no column {name!r}")
        if text := _text(text, f"the description of column {name!r}"):
            named[name] = text
    if named:
        described["columns"] = named
    return described


def only_fields(value: dict[str, Any], fields: set[str], where: str) -> None:
    unknown = sorted(set(value) - fields)
    if unknown:
        raise BadDictionary(
            f"{where} has no field {unknown[0]!r}; it has {' and '.join(map(repr, sorted(fields)))}"
        )


def _text(value: object, what: str) -> str:
    """One description: a string, its whitespace (new lines too) made single spaces."""
    if not isinstance(value, str):
        raise BadDictionary(f"{what} must be a string")
    text = " ".join(value.split())
    if len(text) > MAX_TEXT:
        raise BadDictionary(f"{what} is {len(text):,} characters long; at most {MAX_TEXT:,} are allowed")
    return text


def _tables_named(known: dict[str, list[str]]) -> str:
    if not known:
        return "it has not been read yet, so only its own description ('file') can be set"
    return "its tables are " + ", ".join(repr(key) for key in known) + " ('' is a file of one table)"


def _texts(dictionary: dict[str, Any]) -> list[str]:
    tables = dictionary.get("tables", {}).values()
    return [
        *([dictionary["file"]] if "file" in dictionary else []),
        *(table["text"] for table in tables if "text" in table),
        *(text for table in tables for text in table.get("columns", {}).values()),
    ]


def told(data_file: DataFile) -> str:
    """The dictionary as the system prompt gives it under the file's summary ("" when there is
    none), leaving out tables and columns the file no longer has (it was read differently since)."""
    dictionary = data_file.dictionary or {}
    known = known_columns(data_file)
    lines = [f"- the file: {dictionary['file']}"] if dictionary.get("file") else []
    for key, table in dictionary.get("tables", {}).items():
        if key not in known:
            continue
        if table.get("text"):
            lines.append(f"- table {key!r}: {table['text']}" if key else f"- the table: {table['text']}")
        for name, text in table.get("columns", {}).items():
            if name in known[key]:
                lines.append(f"- column {name!r}" + (f" of table {key!r}" if key else "") + f": {text}")
    if not lines:
        return ""
    return f"\nThe user's data dictionary for {data_file.path}:\n" + "\n".join(lines)
