"""Each kind of connection through the whole stack, as a user's session meets it: made and tested
through the API (Test finds its tables, its objects or the API's answer), attached to a session,
its schema told to the model, whose cell reads it with sql() or connection(); then, for a
database, a user's %%sql cell whose result carries the grid, a write the read-only connection
refuses (its data unchanged), and a long statement stopped by the session's SQL timeout.

Real servers (Postgres, MariaDB, moto's S3, a local HTTP API) and database files made by the
real libraries (DuckDB's from the template's Python: our virtualenv has no duckdb); one session
per kind, its steps in order."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from analyst.realtime import events
from tests.connections.stack.conftest import SQL_TIMEOUT_SECONDS
from tests.connections.stack.test_a_database_from_a_turn import post_json
from tests.connections.stack.test_attach_to_a_running_kernel import run_cell
from tests.fakes.model_server import anthropic_text, anthropic_tool_call
from tests.integration.conftest import wait_for
from tests.servers.database import ORDER_ROWS
from tests.servers.fixtures import s3
from tests.servers.http_api import ORDERS, HttpApi, http_api
from tests.servers.s3 import ORDERS_CSV

__all__ = ["s3"]

TEMPLATE_PYTHON = Path(settings.SANDBOXD_TEMPLATES_DIR) / "code-interpreter" / "venv" / "bin" / "python"
GRID = "application/vnd.dataresource+json"
# sqlite and duckdb have no statement timeout: the kernel interrupts them, and says why
STOPPED_FILE = f"ran longer than the session's SQL timeout ({SQL_TIMEOUT_SECONDS} s) and was stopped"
FIRST_THREE = "select id, customer from orders where id <= 3 order by id"
WRITE = "insert into orders (id, customer, amount) values (9001, 'x', 1)"
TOTAL = sum(i * 1.5 for i in range(1, ORDER_ROWS + 1))  # of every test database's orders.amount


@pytest.fixture(scope="module")
def orders_api() -> Iterator[HttpApi]:
    """The local HTTP API (the name ``api`` is the web app's client here)."""
    with http_api() as server:
        yield server


# ---- the kinds -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Kind:
    kind: str
    name: str  # the connection's
    told: str  # what the system prompt says of it (SQL kinds: its orders table's line)
    code: str  # the model's cell, which reads the connection
    printed: str  # what that cell prints
    long_query: str = ""  # SQL kinds: a statement that runs far beyond the timeout
    stopped: tuple[str, str] = ("", "")  # its error's name and words, once the timeout stops it
    refused: tuple[str, str] = ("", "")  # the read-only write's error's name and words

    @property
    def is_sql(self) -> bool:
        return bool(self.long_query)


def sum_and_count(name: str) -> str:
    return (
        f'found = sql("{name}", "select count(*) as n, sum(amount) as total from orders")\n'
        'print(int(found["n"][0]), float(found["total"][0]))'
    )


SUMMED = f"{ORDER_ROWS} {TOTAL}\n"
KINDS = [
    Kind(
        kind="postgres",
        name="warehouse",
        told="- public.orders: id INTEGER, customer TEXT, amount NUMERIC(10, 2)",
        code=sum_and_count("warehouse"),
        printed=SUMMED,
        long_query="select pg_sleep(30)",
        stopped=("OperationalError", "canceling statement due to statement timeout"),
        refused=("InternalError", "cannot execute INSERT in a read-only transaction"),
    ),
    Kind(
        kind="mysql",
        name="shop",
        told="- shop.orders: id INTEGER, customer VARCHAR(50), amount DECIMAL(10, 2)",
        code=sum_and_count("shop"),
        printed=SUMMED,
        long_query="select sleep(30)",
        stopped=("OperationalError", "max_statement_time exceeded"),
        refused=("OperationalError", "Cannot execute statement in a READ ONLY transaction"),
    ),
    Kind(
        kind="sqlite",
        name="ledger",
        told="- main.orders: id INTEGER, customer TEXT, amount REAL",
        code=sum_and_count("ledger"),
        printed=SUMMED,
        long_query="with recursive c(x) as (select 1 union all select x + 1 from c) select count(*) from c",
        stopped=("TimeoutError", STOPPED_FILE),
        refused=("OperationalError", "attempt to write a readonly database"),
    ),
    Kind(
        kind="duckdb",
        name="lake",
        told="- main.orders: id INTEGER, customer VARCHAR, amount DECIMAL(10,2)",
        code=sum_and_count("lake"),
        printed=SUMMED,
        long_query="select sum(a.range * b.range) from range(1000000) a, range(1000000) b",
        stopped=("TimeoutError", STOPPED_FILE),
        refused=("ProgrammingError", 'on database "lake" which is attached in read-only mode'),
    ),
    Kind(
        kind="s3",
        name="files",
        told='files (s3): connection("files") is a boto3 S3 client for the store (bucket analytics,'
        " prefix exports/)",
        code=(
            'listed = connection("files").list_objects_v2(Bucket="analytics", Prefix="exports/")\n'
            'print([item["Key"] for item in listed["Contents"]])\n'
            'got = connection("files").get_object(Bucket="analytics", Key="exports/orders.csv")\n'
            'print(got["Body"].read().decode(), end="")'
        ),
        printed=f"['exports/orders.csv']\n{ORDERS_CSV.decode()}",
    ),
    Kind(
        kind="http",
        name="orders_api",
        told='orders_api (http): connection("orders_api") is an httpx.Client whose base_url is {url},',
        code='print(connection("orders_api").get("/orders/2").json()["customer"])',
        printed=f"{ORDERS[1]['customer']}\n",
    ),
]
SQL_KINDS = [kind for kind in KINDS if kind.is_sql]


# ---- making each kind's connection ----------------------------------------------------------


def orders_rows() -> list[tuple[int, str, float]]:
    """The rows of every test database's orders (tests/servers/database.py)."""
    return [(i, f"customer {i % 7}", i * 1.5) for i in range(1, ORDER_ROWS + 1)]


def sqlite_file(folder: Path) -> Path:
    path = folder / "ledger.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("create table orders (id integer primary key, customer text, amount real)")
        db.executemany("insert into orders values (?, ?, ?)", orders_rows())
    db.close()
    return path


DUCKDB_SCRIPT = """
import json, sys, duckdb
with duckdb.connect(sys.argv[1]) as db:
    db.execute("create table orders (id integer primary key, customer varchar, amount decimal(10, 2))")
    db.executemany("insert into orders values (?, ?, ?)", json.load(sys.stdin))
"""


def duckdb_file(folder: Path) -> Path:
    path = folder / "lake.duckdb"
    subprocess.run(
        [str(TEMPLATE_PYTHON), "-c", DUCKDB_SCRIPT, str(path)],
        input=json.dumps(orders_rows()).encode(),
        check=True,
        capture_output=True,
        timeout=60,
    )
    return path


@dataclass
class Made:
    """A connection as the user made it, and its secret (none for a file)."""

    body: dict[str, Any]
    secret: str


def make(kind: Kind, api, request, tmp_path: Path) -> Made:
    """POST /api/connections for ``kind``, against its server (started now, if not yet)."""
    if kind.kind in ("postgres", "mysql"):
        database = request.getfixturevalue("postgres" if kind.kind == "postgres" else "mariadb")
        fields = {"url": database.url("postgresql" if kind.kind == "postgres" else "mysql")}
        made = post_json(api, "/api/connections", {"name": kind.name, "kind": kind.kind,
                                                   **fields, "secret": database.password})  # fmt: skip
        secret = database.password
    elif kind.kind in ("sqlite", "duckdb"):
        path = (sqlite_file if kind.kind == "sqlite" else duckdb_file)(tmp_path)
        with path.open("rb") as file:
            made = api.post("/api/connections", {"name": kind.name, "kind": kind.kind, "file": file})
        secret = ""
    elif kind.kind == "s3":
        store = request.getfixturevalue("s3")
        options = {"endpoint_url": store.endpoint_url, "bucket": store.bucket, "prefix": store.prefix,
                   "key_id": store.key_id, "region": store.region}  # fmt: skip
        made = post_json(api, "/api/connections", {"name": kind.name, "kind": "s3", "secret": store.secret,
                                                   "options": options})  # fmt: skip
        secret = store.secret
    else:
        server = request.getfixturevalue("orders_api")
        made = post_json(api, "/api/connections", {"name": kind.name, "kind": "http", "url": server.url,
                                                   "secret": server.token})  # fmt: skip
        secret = server.token
    assert made.status_code == 201, made.content
    body = made.json()["connection"]
    assert body["read_only"] is True  # the default
    return Made(body=body, secret=secret)


# ---- what the steps check ---------------------------------------------------------------------


def assert_found(kind: Kind, tested: dict[str, Any], request) -> None:
    """What Test found: the orders table's columns, the bucket's objects, or the API's answer."""
    assert tested["ok"] is True, tested
    if kind.is_sql:
        (orders,) = [t for t in tested["schema"]["tables"] if t["name"].endswith("orders")]
        assert [c["name"] for c in orders["columns"]] == ["id", "customer", "amount"]
    elif kind.kind == "s3":
        assert tested["schema"]["objects"] == [{"key": "exports/orders.csv", "size": len(ORDERS_CSV)}]
        assert tested["message"].endswith("; found 1 object.")
    else:
        server = request.getfixturevalue("orders_api")
        assert tested["message"].startswith("Connected to HTTP 404 from ") and server.url in tested["message"]
        assert server.received[-1] == ("GET", "/", f"Bearer {server.token}")


def system_prompt(request_json: dict[str, Any]) -> str:
    system = request_json["system"]
    return system if isinstance(system, str) else "".join(part["text"] for part in system)


def cell(api, session, code: str) -> list[dict[str, Any]]:
    """The events of a user's cell (run_cell waits for its turn, the session's last, to end)."""
    run_cell(api, session, code)
    stored = events.after(session.id, 0)
    return [e for e in stored if e.get("turn") == stored[-1]["turn"]]


def only_error(turn_events: list[dict[str, Any]]) -> dict[str, Any]:
    (error,) = [e["payload"] for e in turn_events if e["type"] == "error"]
    return error


def count_in_kernel(api, session, name: str) -> str:
    return run_cell(api, session, f'print(int(sql("{name}", "select count(*) as n from orders")["n"][0]))')


# ---- the test -------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS, ids=[kind.kind for kind in KINDS])
def test_each_kind_from_its_making_to_a_session_that_uses_it(stack, api, session, request, tmp_path, kind):
    made = make(kind, api, request, tmp_path)

    tested = api.post(f"/api/connections/{made.body['id']}/test")
    assert tested.status_code == 200, tested.content
    assert_found(kind, tested.json(), request)

    attached = post_json(api, f"/api/sessions/{session.id}/connections", {"name": kind.name})
    assert attached.status_code == 201, attached.content
    assert attached.json()["connection"]["checked"]["ok"] is True

    # A turn: the model is told the connection, and its cell reads it.
    stack.script(anthropic_tool_call("run_python", {"code": kind.code}), anthropic_text("Done."))
    asked = post_json(api, f"/api/sessions/{session.id}/messages", {"content": "What is there?"})
    assert asked.status_code == 202, asked.content
    stored = wait_for(session)
    assert stored[-1]["type"] == "turn_done", stored[-8:]
    printed = "".join(e["payload"]["text"] for e in stored if e["type"] == "stdout")
    assert printed == kind.printed, stored[-8:]
    system = system_prompt(stack.requests[-2].json)
    url = request.getfixturevalue("orders_api").url if kind.kind == "http" else ""
    assert kind.told.format(url=url) in system, system
    if kind.is_sql:
        assert re.search(rf"^{kind.name} \([^)]+, read-only\): ", system, re.MULTILINE), system
    (tool_result,) = stack.requests[-1].json["messages"][-1]["content"]
    assert kind.printed.strip() in tool_result["content"][0]["text"]  # the model is told what it printed

    if kind.is_sql:
        check_sql_cells(kind, api, session)
    if made.secret:
        assert made.secret not in json.dumps(events.after(session.id, 0))
        assert made.secret not in json.dumps([r.json for r in stack.requests])


def check_sql_cells(kind: Kind, api, session) -> None:
    """A user's %%sql cells: the grid, a write refused, a long statement stopped."""
    shown = cell(api, session, f"%%sql {kind.name}\n{FIRST_THREE}")
    (result,) = [e["payload"] for e in shown if e["type"] == "result"]
    grid = result["data"][GRID]
    assert grid["total_rows"] == 3
    assert [(row["id"], row["customer"]) for row in grid["data"]] == [(i, f"customer {i}") for i in (1, 2, 3)]
    assert "<table" in result["data"]["text/html"]

    written = cell(api, session, f"%%sql {kind.name}\n{WRITE}")
    refused = only_error(written)
    assert (refused["name"], kind.refused[1] in refused["value"]) == (kind.refused[0], True), refused
    assert count_in_kernel(api, session, kind.name).strip() == str(ORDER_ROWS)

    waited = cell(api, session, f"%%sql {kind.name}\n{kind.long_query}")
    stopped = only_error(waited)
    assert (stopped["name"], kind.stopped[1] in stopped["value"]) == (kind.stopped[0], True), stopped
    assert count_in_kernel(api, session, kind.name).strip() == str(ORDER_ROWS)  # the session goes on
