"""Connections in Chromium: a Postgres database added on the Connections page, tested (the tables
it found, or why it failed, in words), edited with its password kept unseen, deleted; attached in a
session's sidebar and queried from a SQL cell whose result is the grid; the session's secrets
listed by name only; and the sidebar's connections on a 390 px screen."""

from __future__ import annotations

import itertools
import re
import sqlite3
import uuid
from collections.abc import Iterator

import psycopg
import pytest

from analyst.models import AnalysisSession, Connection, SessionSecret
from tests.e2e.test_csp import watched
from tests.e2e.test_uploads import file_row, ready
from tests.sandboxd_process import free_port

LONG = 90_000  # ms: a Test or a session's first cell starts a sandbox
PHONE = {"width": 390, "height": 844}
PASSWORD = "pw-never-shown-7Qx"  # trust auth takes any; the page must never show it back
SHOP = (
    "create table customers (id integer primary key, name text not null);"
    "create table orders (id integer primary key, customer_id integer references customers(id),"
    " amount numeric);"
    "insert into customers values (1, 'Ada'), (2, 'Grace');"
    "insert into orders values (1, 1, 12.50), (2, 2, 7.25), (3, 1, 99.00);"
)


@pytest.fixture
def shop_database() -> Iterator[str]:
    """A Postgres database of this test's own on 127.0.0.1:5432, with two tables; its URL (no password)."""
    name = f"e2e_shop_{uuid.uuid4().hex[:10]}"
    admin = "postgresql://postgres@127.0.0.1:5432/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'create database "{name}"')
    try:
        with psycopg.connect(f"postgresql://postgres@127.0.0.1:5432/{name}", autocommit=True) as conn:
            conn.execute(SHOP)
        yield f"postgresql://postgres@127.0.0.1:5432/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'drop database if exists "{name}" with (force)')


def add_connection(page, *, name: str, url: str, secret: str = PASSWORD) -> None:
    from playwright.sync_api import expect

    form = page.get_by_test_id("connection-form")
    form.get_by_test_id("connection-name").fill(name)
    form.get_by_test_id("connection-kind").select_option("postgres")
    form.get_by_test_id("connection-url").fill(url)
    form.get_by_test_id("connection-secret").fill(secret)
    form.get_by_test_id("connection-save").click()
    expect(row_of(page, name)).to_be_visible()


def row_of(page, name: str):
    return page.locator(f"[data-testid=connection-row][data-name={name}]")


def overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"]
        and b["y"] < a["y"] + a["height"]
    )


def open_connections_page(page, web: str) -> None:
    page.get_by_test_id("connections-link").click()
    page.wait_for_url(f"{web}/connections/")


def new_session(page, web: str) -> AnalysisSession:
    page.goto(f"{web}/sessions/")
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    return AnalysisSession.objects.filter(owner__username="alice").latest("created_at")


def test_a_postgres_connection_tested_attached_and_queried_in_a_sql_cell(
    stack, web, alice_login, shoot, shop_database
):
    from playwright.sync_api import expect

    page = alice_login()
    said = watched(page)  # the policy's complaints, on every page this test opens
    open_connections_page(page, web)
    expect(page.get_by_test_id("connections-empty")).to_be_visible()
    add_connection(page, name="shop", url=shop_database)
    row = row_of(page, "shop")
    expect(row.get_by_test_id("connection-row-kind")).to_have_text("PostgreSQL · read-only")
    expect(row.get_by_test_id("connection-row-where")).to_have_text(shop_database)
    expect(row.get_by_test_id("connection-outcome")).to_have_text("Not tested yet")

    row.get_by_test_id("connection-test").click()
    expect(row_of(page, "shop").get_by_test_id("connection-outcome")).to_have_text(
        "Connected: 2 tables", timeout=LONG
    )
    tables = row_of(page, "shop").get_by_test_id("connection-tables")
    tables.locator("summary").click()
    expect(tables.locator("li")).to_have_text(["public.customers", "public.orders"])
    assert PASSWORD not in page.content()
    shoot(page, "tested")

    new_session(page, web)
    panel = page.get_by_test_id("connections-panel")
    expect(panel.get_by_test_id("connection-none")).to_be_hidden()
    panel.get_by_test_id("connection-picker").select_option("shop")
    panel.get_by_test_id("connection-attach").click()
    attached = panel.get_by_test_id("session-connection")
    expect(attached).to_have_count(1, timeout=LONG)
    expect(attached).to_contain_text("shop")
    expect(attached).to_contain_text("PostgreSQL · 2 tables")
    expect(panel.get_by_test_id("connection-none")).to_have_text("Every connection of yours is attached.")

    page.get_by_test_id("mode-toggle").click()
    page.get_by_test_id("cell-language-switch").select_option("sql")
    page.get_by_test_id("sql-connection").select_option("shop")
    page.get_by_test_id("composer-input").fill(
        "select c.name, sum(o.amount) as total from orders o join customers c on c.id = o.customer_id"
        " group by c.name order by c.name"
    )
    page.get_by_test_id("composer-input").press("Control+Enter")
    cell = page.get_by_test_id("code-cell").first
    expect(cell).to_have_attribute("data-state", "done", timeout=LONG)
    expect(cell.get_by_test_id("cell-language")).to_have_text("SQL · shop")
    expect(cell.get_by_test_id("cell-code")).to_contain_text("%%sql shop")
    table = cell.get_by_test_id("data-table")
    expect(table).to_have_attribute("data-state", "grid", timeout=30_000)
    expect(table.locator(".tabulator-row")).to_have_count(2)
    expect(table.locator(".tabulator-row").first).to_contain_text("Ada")
    expect(table.locator(".tabulator-row").first).to_contain_text("111.5")
    shoot(page, "sql-cell")

    # Edit puts the SQL back in the editor, the switch on SQL and the same connection.
    cell.get_by_test_id("cell-edit").click()
    expect(page.get_by_test_id("cell-language-switch")).to_have_value("sql")
    expect(page.get_by_test_id("sql-connection")).to_have_value("shop")
    expect(page.get_by_test_id("composer-input")).to_have_text(re.compile(r"^select c\.name"))

    panel.get_by_test_id("connection-detach").click()
    expect(attached).to_have_count(0)
    expect(page.get_by_test_id("sql-connection").locator("option")).to_have_text(["uploaded files (DuckDB)"])
    assert page.evaluate("window.__violations") == []
    assert said == []


def test_a_sql_cell_over_the_uploaded_files(stack, web, alice_login, shoot, tmp_path):
    from playwright.sync_api import expect

    page = alice_login()
    new_session(page, web)
    (tmp_path / "sales.csv").write_bytes(b"region,amount\nnorth,10\nsouth,32\nnorth,7\n")
    page.get_by_test_id("upload-input").set_input_files(str(tmp_path / "sales.csv"))
    ready(file_row(page, "sales.csv"))
    page.get_by_test_id("mode-toggle").click()
    page.get_by_test_id("cell-language-switch").select_option("sql")
    expect(page.get_by_test_id("sql-connection")).to_have_value("")  # the uploads come first
    page.get_by_test_id("composer-input").fill(
        "select region, sum(amount) as total from sales group by region order by region"
    )
    page.get_by_test_id("composer-input").press("Control+Enter")
    cell = page.get_by_test_id("code-cell").first
    expect(cell).to_have_attribute("data-state", "done", timeout=LONG)
    expect(cell.get_by_test_id("cell-language")).to_have_text("SQL · uploaded files")
    assert cell.get_by_test_id("cell-code").inner_text().startswith("%%sql\nselect region")
    table = cell.get_by_test_id("data-table")
    expect(table).to_have_attribute("data-state", "grid", timeout=30_000)
    expect(table.locator(".tabulator-row")).to_have_count(2)
    expect(table.locator(".tabulator-row").first).to_contain_text("north")
    expect(table.locator(".tabulator-row").first).to_contain_text("17")
    shoot(page, "uploads-sql")

    # A Python cell after it is sent as it is, and its header says Python.
    page.get_by_test_id("cell-language-switch").select_option("python")
    page.get_by_test_id("composer-input").fill("print(6 * 7)")
    page.get_by_test_id("composer-input").press("Control+Enter")
    second = page.get_by_test_id("code-cell").nth(1)
    expect(second.get_by_test_id("cell-output")).to_contain_text("42", timeout=LONG)
    expect(second.get_by_test_id("cell-language")).to_have_text("Python")


def test_a_sqlite_file_is_a_connection_with_its_tables(stack, web, alice_login, shoot, tmp_path):
    from playwright.sync_api import expect

    database = tmp_path / "ledger.sqlite"
    with sqlite3.connect(database) as db:
        db.executescript(
            "create table entries (id integer primary key, amount real); insert into entries values (1, 2.5);"
        )
    db.close()
    page = alice_login()
    open_connections_page(page, web)
    form = page.get_by_test_id("connection-form")
    form.get_by_test_id("connection-name").fill("ledger")
    form.get_by_test_id("connection-kind").select_option("sqlite")
    expect(form.get_by_test_id("connection-url")).to_have_count(0)
    expect(form.get_by_test_id("connection-secret")).to_have_count(0)
    form.get_by_test_id("connection-file").set_input_files(str(database))
    form.get_by_test_id("connection-save").click()
    row = row_of(page, "ledger")
    expect(row.get_by_test_id("connection-row-kind")).to_have_text("SQLite file · read-only")
    expect(row.get_by_test_id("connection-row-where")).to_have_text(
        re.compile(r"^ledger.*\(\d+(\.\d)? KiB\)$")
    )
    row.get_by_test_id("connection-test").click()
    expect(row_of(page, "ledger").get_by_test_id("connection-outcome")).to_have_text(
        "Connected: 1 table", timeout=LONG
    )
    shoot(page, "sqlite")

    row_of(page, "ledger").get_by_test_id("connection-edit").click()
    expect(form.get_by_test_id("connection-file-kept")).to_contain_text("The file stays ledger")
    expect(form.get_by_test_id("connection-file")).to_have_count(0)


def test_the_forms_fields_follow_the_kind(stack, web, alice_login):
    from playwright.sync_api import expect

    page = alice_login()
    open_connections_page(page, web)
    form = page.get_by_test_id("connection-form")
    form.get_by_test_id("connection-name").fill("bucket")
    form.get_by_test_id("connection-kind").select_option("s3")
    expect(form.get_by_test_id("connection-read-only")).to_be_hidden()
    form.get_by_test_id("connection-url").fill("http://127.0.0.1:9/")
    form.get_by_test_id("connection-option-bucket").fill("exports")
    form.get_by_test_id("connection-option-prefix").fill("2026/")
    form.get_by_test_id("connection-option-key_id").fill("AKIDEXAMPLE")
    form.get_by_test_id("connection-secret").fill("s3-secret-never-shown")
    form.get_by_test_id("connection-option-region").fill("eu-west-1")
    form.get_by_test_id("connection-save").click()
    expect(row_of(page, "bucket").get_by_test_id("connection-row-where")).to_have_text(
        "http://127.0.0.1:9/ · s3://exports/2026/"
    )

    form.get_by_test_id("connection-name").fill("api")
    form.get_by_test_id("connection-kind").select_option("http")
    form.get_by_test_id("connection-url").fill("http://127.0.0.1:9/v1")
    expect(form.get_by_test_id("connection-option-header")).to_have_value("Authorization")
    form.get_by_test_id("connection-option-header").fill("X-Api-Key")
    form.get_by_test_id("connection-option-scheme").fill("")
    form.get_by_test_id("connection-secret").fill("http-token-never-shown")
    form.get_by_test_id("connection-save").click()
    expect(row_of(page, "api").get_by_test_id("connection-row-where")).to_have_text(
        "http://127.0.0.1:9/v1 · X-Api-Key: …"
    )
    bucket = Connection.objects.get(name="bucket")
    assert bucket.options == {
        "endpoint_url": "http://127.0.0.1:9/",
        "bucket": "exports",
        "prefix": "2026/",
        "key_id": "AKIDEXAMPLE",
        "region": "eu-west-1",
    }
    api = Connection.objects.get(name="api")
    assert (api.options, bool(api.secret_sealed)) == ({"header": "X-Api-Key", "scheme": ""}, True)
    page.reload()
    for secret in ("s3-secret-never-shown", "http-token-never-shown"):
        assert secret not in page.content()

    # Editing the bucket's endpoint alone: its secret stays, its options follow the URL.
    row_of(page, "bucket").get_by_test_id("connection-edit").click()
    expect(form.get_by_test_id("connection-option-bucket")).to_have_value("exports")
    expect(form.get_by_test_id("connection-secret")).to_have_attribute("placeholder", "unchanged")
    form.get_by_test_id("connection-url").fill("http://127.0.0.1:10/")
    form.get_by_test_id("connection-save").click()
    expect(row_of(page, "bucket").get_by_test_id("connection-row-where")).to_have_text(
        "http://127.0.0.1:10/ · s3://exports/2026/"
    )
    bucket.refresh_from_db()
    assert bucket.options["endpoint_url"] == "http://127.0.0.1:10/" and bucket.secret_sealed


def test_a_failed_test_says_why_and_editing_keeps_the_password_unseen(stack, web, alice_login, shoot):
    from playwright.sync_api import expect

    page = alice_login()
    open_connections_page(page, web)
    closed = f"postgresql://analyst@127.0.0.1:{free_port()}/sales"  # nothing listens there
    add_connection(page, name="nowhere", url=closed)
    row = row_of(page, "nowhere")
    row.get_by_test_id("connection-test").click()
    outcome = row_of(page, "nowhere").get_by_test_id("connection-outcome")
    expect(outcome).to_have_text(re.compile(r"^Could not connect: \w.{10,}"), timeout=LONG)
    expect(outcome).to_have_attribute("data-ok", "false")
    shoot(page, "failed")

    row_of(page, "nowhere").get_by_test_id("connection-edit").click()
    form = page.get_by_test_id("connection-form")
    secret = form.get_by_test_id("connection-secret")
    expect(secret).to_have_value("")
    expect(secret).to_have_attribute("placeholder", "unchanged")
    expect(form.get_by_test_id("connection-kind")).to_be_disabled()
    form.get_by_test_id("connection-name").fill("elsewhere")
    form.get_by_test_id("connection-read-only").uncheck()
    form.get_by_test_id("connection-save").click()
    expect(row_of(page, "elsewhere").get_by_test_id("connection-row-kind")).to_have_text(
        "PostgreSQL · read and write"
    )
    expect(row_of(page, "nowhere")).to_have_count(0)
    saved = Connection.objects.get(owner__username="alice")
    assert (saved.name, saved.read_only) == ("elsewhere", False)
    assert saved.secret_sealed and PASSWORD not in saved.secret_sealed, "the password was kept, sealed"
    assert PASSWORD not in page.content()

    form.get_by_test_id("connection-name").fill("Not An Identifier")
    form.get_by_test_id("connection-kind").select_option("postgres")
    form.get_by_test_id("connection-url").fill(closed)
    form.get_by_test_id("connection-save").click()
    expect(form.get_by_test_id("connection-name")).to_have_js_property("validity.valid", False)

    row_of(page, "elsewhere").get_by_test_id("connection-delete-open").click()
    row_of(page, "elsewhere").get_by_test_id("connection-delete").click()
    expect(page.get_by_test_id("connection-row")).to_have_count(0)
    expect(page.get_by_test_id("connections-empty")).to_be_visible()
    assert not Connection.objects.filter(owner__username="alice").exists()


def test_a_sessions_secrets_are_listed_by_name_only(stack, web, alice_login, shoot):
    from playwright.sync_api import expect

    page = alice_login()
    session = new_session(page, web)
    panel = page.get_by_test_id("secrets-panel")
    value = "sk-test-" + uuid.uuid4().hex
    panel.get_by_test_id("secret-name").fill("OPENAI_API_KEY")
    panel.get_by_test_id("secret-value").fill(value)
    expect(panel.get_by_test_id("secret-value")).to_have_attribute("type", "password")
    panel.get_by_test_id("secret-add").click()
    expect(panel.get_by_test_id("secret-listed-name")).to_have_text(["OPENAI_API_KEY"])
    expect(panel.get_by_test_id("secret-value")).to_have_value("")
    assert SessionSecret.objects.filter(session=session, name="OPENAI_API_KEY").exists()

    page.reload()
    panel = page.get_by_test_id("secrets-panel")
    expect(panel.get_by_test_id("secret-listed-name")).to_have_text(["OPENAI_API_KEY"])
    assert value not in page.content()
    shoot(page, "secret-listed")

    panel.get_by_test_id("secret-delete").click()
    expect(panel.get_by_test_id("session-secret")).to_have_count(0)
    assert not SessionSecret.objects.filter(session=session).exists()


@pytest.mark.parametrize("width", [1280, 390])
def test_the_sidebars_connections_fit_the_screen(stack, web, alice_login, shoot, width):
    from playwright.sync_api import expect

    page = alice_login()
    page.set_viewport_size({"width": width, "height": 844})
    page.goto(f"{web}/connections/")
    closed = f"127.0.0.1:{free_port()}"  # attaching looks into it: loopback, where nothing listens
    add_connection(page, name="warehouse", url=f"postgresql://analyst@{closed}/sales")
    add_connection(page, name="ledger", url=f"postgresql://analyst@{closed}/ledger")
    shoot(page, "page")
    assert page.evaluate("document.documentElement.scrollWidth") <= width, "no sideways scrolling"

    new_session(page, web)
    if width < 800:
        expect(page.get_by_test_id("connections-panel")).to_be_hidden()  # behind the tools' button
        page.get_by_test_id("session-tools-open").click()
    panel = page.get_by_test_id("connections-panel")
    expect(panel).to_be_visible()
    expect(panel.get_by_test_id("connection-picker").locator("option")).to_have_count(2)
    panel.get_by_test_id("connection-picker").select_option("warehouse")
    panel.get_by_test_id("connection-attach").click()
    expect(panel.get_by_test_id("session-connection")).to_have_count(1, timeout=LONG)
    expect(panel.get_by_test_id("session-connection-note")).to_have_text("PostgreSQL · could not connect")
    expect(panel.get_by_test_id("connections-page-link")).to_be_visible()
    expect(page.get_by_test_id("secrets-panel")).to_be_visible()
    shoot(page, "sidebar")
    assert page.evaluate("document.documentElement.scrollWidth") <= width, "no sideways scrolling"

    if width < 800:
        page.get_by_test_id("session-tools-open").click()  # closes the tools again
    page.get_by_test_id("mode-toggle").click()
    page.get_by_test_id("cell-language-switch").select_option("sql")
    expect(page.get_by_test_id("sql-connection").locator("option")).to_have_text(
        ["uploaded files (DuckDB)", "warehouse"]
    )
    composer = page.locator("form.composer").bounding_box()
    assert composer and composer["x"] >= 0 and composer["x"] + composer["width"] <= width
    controls = ("mode-toggle", "cell-language-switch", "sql-connection", "model-picker", "send")
    boxes = {testid: page.get_by_test_id(testid).bounding_box() for testid in controls}
    for testid, box in boxes.items():
        assert box and composer["x"] <= box["x"], f"{testid} in the composer"
        assert box["x"] + box["width"] <= composer["x"] + composer["width"], f"{testid} in the composer"
    for first, second in itertools.combinations(controls, 2):
        assert not overlap(boxes[first], boxes[second]), f"{first} and {second} overlap"
    shoot(page, "sql-composer")
    assert page.evaluate("document.documentElement.scrollWidth") <= width, "no sideways scrolling"
