"""check() and schema() of the kernel's connections (connections.py), for the worker's silent
cells: what a connection reaches and holds, or why it failed, as JSON-ready dicts that never
raise. Loaded on first use, as ``_analyst_connections_checks``."""

from __future__ import annotations

import contextlib
import re
from typing import Any

import _analyst_connections as core

MAX_TABLES = 200
MAX_COLUMNS = 100
MAX_MESSAGE_CHARS = 500
SYSTEM_SCHEMAS = frozenset(
    {"information_schema", "pg_catalog", "pg_toast", "mysql", "performance_schema", "sys"}
)


def check(name: str) -> dict[str, Any]:
    """``{"ok": true, "server", "schema"}`` once the connection answered, or ``{"ok": false,
    "category", "message"}``: category auth, tls, timeout, refused, not_found or other."""
    try:
        kind = core.config_of(name).get("kind")
        server, found = _CHECKS[kind](name) if kind in _CHECKS else _check_sql(name, kind)
    except Exception as exc:  # every failure is an answer
        category, message = _failure(exc)
        return {"ok": False, "category": category, "message": _clean(message, name)}
    return {"ok": True, "server": _clean(server, name), "schema": found}


def schema(name: str) -> dict[str, Any]:
    """The connection's tables (at most MAX_TABLES, MAX_COLUMNS columns each), or for s3 its
    first objects; {"error": {"category", "message"}} when it cannot be read."""
    try:
        kind = core.config_of(name).get("kind")
        return _CHECKS[kind](name)[1] if kind in _CHECKS else _sql_schema(core.connection(name), kind)
    except Exception as exc:
        category, message = _failure(exc)
        return {"error": {"category": category, "message": _clean(message, name)}}


def _check_sql(name: str, kind: str) -> tuple[str, dict[str, Any]]:
    from sqlalchemy import text

    engine = core.connection(name)
    version_query = {"sqlite": "select sqlite_version()"}.get(kind, "select version()")
    with engine.connect() as conn:
        version = str(conn.execute(text(version_query)).scalar())
    server = {
        "sqlite": f"SQLite {version}",
        "duckdb": f"DuckDB {version}",
        "mysql": version if "mariadb" in version.lower() else f"MySQL {version}",
    }.get(kind, version)
    return server, _sql_schema(engine, kind)


def _sql_schema(engine: Any, kind: str) -> dict[str, Any]:
    from sqlalchemy import inspect

    if kind == "duckdb":
        return _duckdb_schema(engine)
    inspector = inspect(engine)
    default = inspector.default_schema_name
    if kind == "mysql":
        schemas = [default]  # the URL's database alone, not every one the user may see
    else:
        names = [
            s for s in inspector.get_schema_names() if s not in SYSTEM_SCHEMAS and not s.startswith("pg_")
        ]
        schemas = sorted(names, key=lambda s: (s != default, s))
    tables: list[dict[str, Any]] = []
    truncated = False
    for schema_name in schemas:
        names = sorted(
            {*inspector.get_table_names(schema=schema_name), *inspector.get_view_names(schema=schema_name)}
        )
        room = MAX_TABLES - len(tables)
        if len(names) > room:
            names, truncated = names[:room], True
        for table in names:
            columns = inspector.get_columns(table, schema=schema_name)
            tables.append(
                {
                    "name": f"{schema_name}.{table}" if schema_name else table,
                    "columns": [{"name": c["name"], "type": str(c["type"])} for c in columns[:MAX_COLUMNS]],
                }
            )
        if truncated:
            break
    return {"tables": tables, "truncated": truncated}


def _duckdb_schema(engine: Any) -> dict[str, Any]:
    """DuckDB's tables from its own catalog: duckdb_engine's inspector runs SQLAlchemy's Postgres
    queries, which name catalog tables DuckDB lacks (pg_collation, under SQLAlchemy 2.1)."""
    from sqlalchemy import text

    query = (
        "select schema_name, table_name, column_name, data_type from duckdb_columns()"
        " where database_name = current_database() and not internal"
        " order by schema_name <> current_schema(), schema_name, table_name, column_index"
    )
    with engine.connect() as conn:
        rows = conn.execute(text(query)).all()
    tables: dict[str, list[dict[str, str]]] = {}
    for schema_name, table, column, data_type in rows:
        columns = tables.setdefault(f"{schema_name}.{table}", [])
        if len(columns) < MAX_COLUMNS:
            columns.append({"name": column, "type": data_type})
    names = list(tables)
    return {
        "tables": [{"name": name, "columns": tables[name]} for name in names[:MAX_TABLES]],
        "truncated": len(names) > MAX_TABLES,
    }


def _check_s3(name: str) -> tuple[str, dict[str, Any]]:
    options = core.config_of(name).get("options") or {}
    bucket, prefix = options.get("bucket") or "", options.get("prefix") or ""
    answer = core.connection(name).list_objects_v2(Bucket=bucket, Prefix=prefix, MaxKeys=MAX_TABLES)
    objects = [{"key": item["Key"], "size": item["Size"]} for item in answer.get("Contents", [])]
    where = options.get("endpoint_url") or "AWS S3"
    return f"S3 bucket {bucket} at {where}", {"bucket": bucket, "prefix": prefix, "objects": objects}


def _check_http(name: str) -> tuple[str, dict[str, Any]]:
    response = core.connection(name).get("")
    if response.status_code in (401, 403):
        raise _HttpRefused("auth", f"the API refused the credentials (HTTP {response.status_code})")
    if response.status_code >= 500:  # a 404 at the base URL still says the API is there
        raise _HttpRefused("other", f"the API answered HTTP {response.status_code}")
    return f"HTTP {response.status_code} from {response.url}", {}


class _HttpRefused(Exception):
    def __init__(self, category: str, message: str) -> None:
        super().__init__(message)
        self.category = category


_CHECKS = {"s3": _check_s3, "http": _check_http}


# ---- failures in words ---------------------------------------------------------------------------

# psycopg's SQLSTATEs and MySQL/MariaDB's error numbers, by category.
_POSTGRES_STATES = {
    "28P01": "auth",
    "28000": "auth",
    "3D000": "not_found",
    "57014": "timeout",
    "08006": "refused",
}
_MYSQL_CODES = {1044: "auth", 1045: "auth", 1049: "not_found", 1969: "timeout", 3024: "timeout", 2026: "tls"}
_MYSQL_LOST = {2003, 2006, 2013}  # could not connect, or the other end closed
_S3_AUTH = {"InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "InvalidToken", "ExpiredToken"}
# What a driver's message says, when nothing more precise did (a login refused before any SQLSTATE).
_WORDS = (
    (r"password authentication failed|access denied|role \".*\" does not exist", "auth"),
    (r"does not exist|unknown database", "not_found"),
)
_SENTENCES = {
    "auth": "The server refused the login",
    "tls": "The TLS handshake failed",
    "timeout": "The server did not answer in time",
    "refused": "The connection was refused or closed (the server may be unreachable from here)",
    "not_found": "What the connection names does not exist",
    "other": "The connection failed",
}


def _failure(exc: BaseException) -> tuple[str, str]:
    """(category, message in words) of what connecting or querying raised."""
    cause = getattr(exc, "orig", None) or exc  # SQLAlchemy wraps the driver's error
    category = getattr(cause, "category", None) or _category(cause)
    detail = " ".join(str(cause).split())[:MAX_MESSAGE_CHARS]
    if isinstance(cause, core.UnknownConnection | core.NotReachable):
        return category, detail
    return category, f"{_SENTENCES[category]}: {detail}" if detail else _SENTENCES[category] + "."


def _category(cause: BaseException) -> str:
    import ssl

    text = str(cause).lower()
    state = getattr(cause, "sqlstate", None)
    if state in _POSTGRES_STATES:
        return _POSTGRES_STATES[state]
    code = cause.args[0] if cause.args and isinstance(cause.args[0], int) else None
    if type(cause).__module__.startswith("pymysql") and code is not None:
        if code in _MYSQL_CODES:
            return _MYSQL_CODES[code]
        if code in _MYSQL_LOST:
            return "timeout" if "timed out" in text else "refused"
    s3_code = (
        str(getattr(cause, "response", {}).get("Error", {}).get("Code", ""))
        if hasattr(cause, "response")
        else ""
    )
    if s3_code in _S3_AUTH:
        return "auth"
    if s3_code in ("NoSuchBucket", "NoSuchKey"):
        return "not_found"
    if isinstance(cause, core.UnknownConnection | FileNotFoundError):
        return "not_found"
    if isinstance(cause, ssl.SSLError) or "ssl" in text or "tls" in text or "certificate" in text:
        return "tls"
    if isinstance(cause, TimeoutError) or "timeout" in text or "timed out" in text:
        return "timeout"
    refusals = (
        "refused",
        "closed the connection",
        "connection reset",
        "could not connect",
        "lost connection",
    )
    if isinstance(cause, ConnectionError | core.NotReachable) or any(words in text for words in refusals):
        return "refused"
    for pattern, category in _WORDS:
        if re.search(pattern, text):
            return category
    return "other"


def _clean(text: str, name: str) -> str:
    """``text`` without the connection's secret (a driver may repeat what it was given)."""
    with contextlib.suppress(Exception):
        secret = core.secret_of(name)
        if len(secret) >= 4:
            return text.replace(secret, f"«secret:{name}»")
    return text
