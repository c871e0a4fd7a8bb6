"""What the model is told of a session's connections: each one's kind, how to use it from the
kernel, its tables with their columns and types (bounded) and what the user's data dictionary says
of them; and the names of the session's secret environment variables (never their values).

Never a row of a table: the schema a Test reads is names and types only, so a session in schema
mode (analyst.trust.privacy) gives the model nothing of a connection's values here."""

from __future__ import annotations

from typing import Any

from analyst.connections.attachments import attached
from analyst.models import AnalysisSession, Connection

MAX_TABLES = 50
MAX_COLUMNS = 40

HOW = {
    "sql": (
        'query it with sql("{name}", "select …") (a pandas DataFrame), or a cell that starts with'
        ' "%%sql {name}" (its result shown as a table; "%%sql {name} -> df" also keeps it in df);'
        ' connection("{name}") is a SQLAlchemy engine.'
    ),
    "s3": (
        'connection("{name}") is a boto3 S3 client for the store (bucket {bucket}{prefix});'
        ' connection("{name}", "fs") an fsspec filesystem over it.'
    ),
    "http": (
        'connection("{name}") is an httpx.Client whose base_url is {url}, with its credentials'
        " already set on every request."
    ),
}


def told(session: AnalysisSession) -> str:
    """The system prompt's part on the session's connections and secret variables ("" for none)."""
    text = ""
    connections = attached(session)
    if connections:
        described = "\n\n".join(_described(c) for c in connections)
        text += (
            "\n\nConnections the kernel can use (its credentials are set inside connection() and"
            " sql(); you never need them, and any credential an output shows is replaced by"
            " «secret:NAME»):\n\n" + described
        )
    names = list(session.secrets.values_list("name", flat=True))
    if names:
        text += (
            "\n\nSecret environment variables set in the kernel (for libraries that read them;"
            f" never print them): {', '.join(names)}."
        )
    return text


def tool_note(session: AnalysisSession) -> str:
    """A sentence for run_python's description when the session has connections ("" if none)."""
    names = [c.name for c in attached(session)]
    if not names:
        return ""
    return (
        f" The session's connections ({', '.join(names)}) are reached with sql(name, query),"
        ' "%%sql name" cells and connection(name); see the system prompt for their tables.'
    )


def _described(connection: Connection) -> str:
    mode = "read-only" if connection.read_only else "read-write"
    if connection.kind in ("s3", "http"):
        options = connection.options
        how = HOW[connection.kind].format(
            name=connection.name,
            bucket=options.get("bucket", ""),
            prefix=f", prefix {options['prefix']}" if options.get("prefix") else "",
            url=connection.url,
        )
        return f"{connection.name} ({connection.kind}): {how}"
    how = HOW["sql"].format(name=connection.name)
    return f"{connection.name} ({_kind_named(connection.kind)}, {mode}): {how}\n{_tables(connection)}"


def _kind_named(kind: str) -> str:
    return {"mysql": "MySQL/MariaDB", "postgres": "PostgreSQL", "sqlite": "SQLite", "duckdb": "DuckDB"}[kind]


def _tables(connection: Connection) -> str:
    tables = (connection.schema or {}).get("tables")
    if tables is None:
        return "Its tables have not been read yet: list them with a query of the catalog."
    if not tables:
        return "It holds no tables."
    lines = ["Tables (columns and types):"]
    for table in tables[:MAX_TABLES]:
        columns = table.get("columns", [])
        shown = ", ".join(f"{c['name']} {c['type']}".strip() for c in columns[:MAX_COLUMNS])
        if len(columns) > MAX_COLUMNS:
            shown += f", and {len(columns) - MAX_COLUMNS} more columns"
        lines.append(f"- {table['name']}: {shown}")
        lines += _described_by_user(connection, table)
    if len(tables) > MAX_TABLES:
        lines.append(f"- and {len(tables) - MAX_TABLES} more tables")
    return "\n".join(lines)


def _described_by_user(connection: Connection, table: dict[str, Any]) -> list[str]:
    """The data dictionary's lines for ``table`` (analyst.trust.connection_dictionary), leaving
    out columns the table no longer has (a Test read it differently since)."""
    described = ((connection.dictionary or {}).get("tables") or {}).get(table["name"]) or {}
    lines = [f"  the user says: {described['text']}"] if described.get("text") else []
    columns = {c["name"] for c in table.get("columns", [])}
    lines += [
        f"  column {name!r}: {text}"
        for name, text in (described.get("columns") or {}).items()
        if name in columns
    ]
    return lines
