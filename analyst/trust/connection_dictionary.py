"""A database connection's data dictionary: what its tables and their columns hold, in the user's
words, checked against the tables its last Test found, and bounded as a file's dictionary is
(analyst.trust.dictionary). The model reads it beside the connection's schema
(analyst.connections.describe).

Its shape is Connection.dictionary's: ``{"tables": {"<table>": {"text": "…", "columns":
{"<column>": "…"}}}}``; empty descriptions are left out, so an empty dictionary is ``{}``.
"""

from __future__ import annotations

from typing import Any

from analyst.models import Connection
from analyst.trust.dictionary import BadDictionary, check_table, check_total, only_fields

__all__ = ["BadDictionary", "check", "do_set"]


def do_set(*, connection: Connection, dictionary: object) -> Connection:
    """Replace the connection's dictionary whole with ``dictionary``, checked (BadDictionary)."""
    connection.dictionary = check(connection, dictionary)
    # Only this field: a Test of the connection may be saving its schema meanwhile.
    Connection.objects.filter(id=connection.id).update(dictionary=connection.dictionary)
    return connection


def check(connection: Connection, dictionary: object) -> dict[str, Any]:
    """``dictionary`` with its texts trimmed and the empty ones left out; BadDictionary unless it
    has the dictionary's shape, names only tables and columns the connection's schema has, and
    fits the limits."""
    if not isinstance(dictionary, dict):
        raise BadDictionary('the dictionary must be an object: {"tables": {"<table>": {"text", "columns"}}}')
    only_fields(dictionary, {"tables"}, "a connection's dictionary")
    tables = dictionary.get("tables", {})
    if not isinstance(tables, dict):
        raise BadDictionary("'tables' must be an object of the connection's tables by name")
    known = known_columns(connection)
    checked_tables = {}
    for name, table in tables.items():
        if name not in known:
            raise BadDictionary(f"{connection.name} has no table {name!r}; {_tables_named(known)}")
        if described := check_table(name, table, known[name]):
            checked_tables[name] = described
    checked = {"tables": checked_tables} if checked_tables else {}
    check_total(checked, "per connection")
    return checked


def known_columns(connection: Connection) -> dict[str, list[str]]:
    """Each table its last Test found and its columns' names (nothing before a Test)."""
    known: dict[str, list[str]] = {}
    for table in (connection.schema or {}).get("tables") or []:
        if isinstance(table, dict) and isinstance(table.get("name"), str):
            columns = table.get("columns") or []
            known[table["name"]] = [str(c["name"]) for c in columns if isinstance(c, dict) and c.get("name")]
    return known


def _tables_named(known: dict[str, list[str]]) -> str:
    if not known:
        return "its tables have not been read yet: Test the connection first"
    shown = ", ".join(repr(name) for name in list(known)[:20])
    return f"its tables are {shown}" + (" and more" if len(known) > 20 else "")
