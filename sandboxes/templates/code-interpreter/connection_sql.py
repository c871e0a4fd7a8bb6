"""sql() of the kernel's connections (connections.py): a query's rows, bounded, as a DataFrame,
from an attached database or from DuckDB over the uploads; and the %%sql magic's line.
Loaded on first use, as ``_analyst_connections_sql``."""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
from collections.abc import Callable
from typing import Any

import _analyst_connections as core

UPLOAD_READERS = {".csv": "read_csv_auto", ".parquet": "read_parquet", ".json": "read_json_auto"}
TARGET = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def sql(name_or_query: str | None, query: str | None = None, /, **params: Any) -> Any:
    """connections.sql(): its documentation is there."""
    name, query = (None, name_or_query) if query is None else (name_or_query, query)
    if not isinstance(query, str) or not query.strip():
        raise ValueError("sql() needs a query")
    if name is None:
        return _sql_over_uploads(query, params)
    kind = core.config_of(name).get("kind")
    if kind not in core.SQL_KINDS:
        raise TypeError(f"connection {name!r} is {kind}, not a database: use connection({name!r})")
    from sqlalchemy import text

    limit, timeout = core.sql_max_rows(), core.sql_timeout()
    with core.connection(name).connect() as conn:
        # A server-side cursor (only what is fetched comes), where the statement allows one.
        conn.execution_options(stream_results=_returns_rows(query))
        # postgres and mysql stop a statement themselves (statement_timeout, max_statement_time)
        interrupting = (
            _stopped_after(timeout, getattr(conn.connection.dbapi_connection, "interrupt", lambda: None))
            if kind in core.FILE_KINDS
            else contextlib.nullcontext()
        )
        with interrupting:
            result = conn.execute(text(query), params)
            columns = list(result.keys()) if result.returns_rows else []
            rows = result.fetchmany(limit + 1) if result.returns_rows else []
            if len(rows) > limit:
                _abandon(result)
                conn.invalidate()  # never drain the rest of a cut result: drop its connection
            else:
                result.close()
                conn.commit()
    return _frame(rows, columns, limit)


def _returns_rows(query: str) -> bool:
    """Whether ``query`` is a plain query (Postgres declares a cursor only for those)."""
    words = re.sub(r"(--[^\n]*|/\*.*?\*/|\s|\()+", " ", query, flags=re.DOTALL).split()
    return bool(words) and words[0].lower() in ("select", "with", "values", "table")


def _abandon(result: Any) -> None:
    """Tell pymysql its unbuffered result is over, so closing it reads no more rows (its
    connection is dropped instead)."""
    unbuffered = getattr(getattr(result, "cursor", None), "_result", None)
    if unbuffered is not None and hasattr(unbuffered, "unbuffered_active"):
        unbuffered.unbuffered_active = False


@contextlib.contextmanager
def _stopped_after(seconds: float, interrupt: Callable[[], Any]) -> Any:
    """Interrupt a file database's statement once ``seconds`` are up (sqlite3 and duckdb have no
    statement timeout of their own), and say why: their own error says only "interrupted"."""
    fired = threading.Event()

    def stop() -> None:
        fired.set()
        interrupt()

    timer = threading.Timer(seconds, stop)
    timer.daemon = True
    timer.start()
    try:
        yield
    except Exception as exc:
        if fired.is_set():
            raise TimeoutError(
                f"the statement ran longer than the session's SQL timeout ({seconds:g} s) and was stopped"
            ) from exc
        raise
    finally:
        timer.cancel()


def _frame(rows: list[Any], columns: list[str], limit: int) -> Any:
    import pandas as pd

    if len(rows) > limit:
        rows = rows[:limit]
        print(f"notice: the result was cut at {limit:,} rows (the session's limit)", file=sys.stderr)
    return pd.DataFrame.from_records([tuple(row) for row in rows], columns=columns, coerce_float=True)


def _sql_over_uploads(query: str, params: dict[str, Any]) -> Any:
    import duckdb

    limit = core.sql_max_rows()
    with duckdb.connect() as db:
        for view, path, reader in _uploads():
            db.execute(f"CREATE VIEW \"{view}\" AS SELECT * FROM {reader}('{path}')")  # noqa: S608 (quoted)
        with _stopped_after(core.sql_timeout(), db.interrupt):
            cursor = db.execute(query, params or None)
            columns = [column[0] for column in cursor.description or []]
            rows = cursor.fetchmany(limit + 1) if columns else []
    return _frame(rows, columns, limit)


def _uploads() -> list[tuple[str, str, str]]:
    """(view name, path, DuckDB reader) of each uploaded table file: the first of each stem."""
    folder = os.path.join(core.workdir(), "data")
    found: dict[str, tuple[str, str, str]] = {}
    with contextlib.suppress(OSError):
        for entry in sorted(os.listdir(folder)):
            stem, extension = os.path.splitext(entry)
            reader = UPLOAD_READERS.get(extension.lower())
            if reader and stem and stem not in found:
                path = os.path.join(folder, entry)
                found[stem] = (stem.replace('"', '""'), path.replace("'", "''"), reader)
    return list(found.values())


# ---- %%sql ------------------------------------------------------------------------------------


def parse_magic_line(line: str) -> tuple[str | None, str | None]:
    """``[name] [[->] variable]`` → (name or None, variable or None)."""
    words = [word for word in line.split() if word != "->"]
    arrow = "->" in line.split()
    if arrow and len(words) == 1:
        return None, words[0]
    if len(words) > 2:
        raise ValueError("usage: %%sql [connection] [-> variable]")
    name = words[0] if words else None
    variable = words[1] if len(words) == 2 else None
    if variable is not None and not TARGET.match(variable):
        raise ValueError(f"%%sql cannot store the result in {variable!r}: not a variable name")
    return name, variable
