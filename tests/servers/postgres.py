"""A fresh database on the running Postgres (127.0.0.1:5432, trust auth), owned by a role of its own.

Trust auth lets any password in: a test of a refused login uses a role that does not exist."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator

import psycopg

from tests.servers.database import ORDER_ROWS, Database

HOST, PORT, ADMIN = "127.0.0.1", 5432, "postgres"


@contextlib.contextmanager
def postgres_database() -> Iterator[Database]:
    """A database whose ``orders`` table is filled, owned (tables and all) by a role with a
    password; both are dropped afterwards."""
    suffix = secrets.token_hex(4)
    database, role, password = f"conn_test_{suffix}", f"analyst_{suffix}", f"pg-secret-{suffix}"
    with _admin("postgres") as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
        admin.execute(f"CREATE DATABASE {database} OWNER {role}")
    try:
        with psycopg.connect(host=HOST, port=PORT, user=role, dbname=database, autocommit=True) as owner:
            owner.execute(
                "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT, amount NUMERIC(10, 2))"
            )
            rows = "SELECT i, 'customer ' || (i %% 7), i * 1.5 FROM generate_series(1, %s) AS i"
            owner.execute(f"INSERT INTO orders {rows}", (ORDER_ROWS,))
        yield Database(host=HOST, port=PORT, user=role, password=password, database=database)
    finally:
        with _admin("postgres") as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
            admin.execute(f"DROP ROLE IF EXISTS {role}")


def _admin(dbname: str) -> psycopg.Connection:
    return psycopg.connect(host=HOST, port=PORT, user=ADMIN, dbname=dbname, autocommit=True)
