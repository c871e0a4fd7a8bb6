"""Through the whole stack against a real Postgres: Test finds the schema of a good connection and
says in words why a closed port fails; attached, the session's model is told its tables, and a
cell the model writes reads it with sql() and gets the count; the password is in no event, and a
cell that digs it out and prints it shows «secret:warehouse» in the log, to the model, in the
exports and through a share link."""

from __future__ import annotations

import json
import socket

import pytest
from django.test import Client

from analyst.models import Connection, ShareLink
from tests.fakes.model_server import anthropic_text, anthropic_tool_call
from tests.integration.conftest import wait_for
from tests.servers.database import ORDER_ROWS


def post_json(api, path: str, body: dict) -> object:
    return api.post(path, json.dumps(body), "application/json")


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def warehouse(postgres, **changes) -> dict:
    return {
        "name": "warehouse",
        "kind": "postgres",
        "url": postgres.url("postgresql"),
        "secret": postgres.password,
        "read_only": True,
        **changes,
    }


@pytest.mark.parametrize(
    ("server", "kind", "said"), [("postgres", "postgres", "PostgreSQL"), ("mariadb", "mysql", "")]
)
def test_test_finds_the_schema_of_a_good_connection(stack, api, request, server, kind, said):
    database = request.getfixturevalue(server)
    fields = {"kind": kind, "url": database.url("postgresql" if kind == "postgres" else "mysql"),
              "secret": database.password}  # fmt: skip
    made = post_json(api, "/api/connections", warehouse(database, **fields))
    assert made.status_code == 201, made.content
    tested = api.post(f"/api/connections/{made.json()['connection']['id']}/test")
    assert tested.status_code == 200
    body = tested.json()
    assert body["ok"] is True, body
    assert body["message"].startswith(f"Connected to {said}")
    (orders,) = [t for t in body["schema"]["tables"] if t["name"].endswith("orders")]
    assert [c["name"] for c in orders["columns"]] == ["id", "customer", "amount"]
    stored = Connection.objects.get()
    assert stored.checked["ok"] is True and stored.schema == body["schema"]
    assert database.password not in tested.content.decode()


def test_test_on_a_closed_port_says_refused_in_words(stack, api, postgres):
    url = f"postgresql://{postgres.user}@127.0.0.1:{closed_port()}/{postgres.database}"
    made = post_json(api, "/api/connections", warehouse(postgres, url=url))
    tested = api.post(f"/api/connections/{made.json()['connection']['id']}/test").json()
    assert tested["ok"] is False
    assert tested["category"] == "refused", tested
    assert "refused" in tested["message"].lower() and len(tested["message"].split()) > 3
    assert tested["schema"] is None
    assert Connection.objects.get().checked["category"] == "refused"


def test_a_turn_counts_the_rows_of_an_attached_database(stack, api, session, postgres):
    assert post_json(api, "/api/connections", warehouse(postgres)).status_code == 201
    attached = post_json(api, f"/api/sessions/{session.id}/connections", {"name": "warehouse"})
    assert attached.status_code == 201, attached.content
    assert attached.json()["connection"]["checked"]["ok"] is True  # its schema read on attach

    code = 'n = sql("warehouse", "select count(*) as n from orders")["n"][0]\nprint(f"rows: {n}")'
    stack.script(anthropic_tool_call("run_python", {"code": code}), anthropic_text("There are 50 orders."))
    asked = post_json(api, f"/api/sessions/{session.id}/messages", {"content": "How many orders?"})
    assert asked.status_code == 202, asked.content
    stored = wait_for(session)
    assert stored[-1]["type"] == "turn_done", stored

    printed = "".join(e["payload"]["text"] for e in stored if e["type"] == "stdout")
    assert printed == f"rows: {ORDER_ROWS}\n"
    first, second = stack.requests[-2].json, stack.requests[-1].json
    system = first["system"] if isinstance(first["system"], str) else first["system"][0]["text"]
    assert "warehouse (PostgreSQL, read-only)" in system and "orders: id INTEGER" in system.replace(
        "public.", ""
    )
    assert f"rows: {ORDER_ROWS}" in json.dumps(second["messages"][-1])
    assert postgres.password not in json.dumps(stored)
    assert postgres.password not in json.dumps([r.json for r in stack.requests])


DIG_OUT = """\
import json
config = json.load(open('/run/kernel/egress.json'))['config']
password = config['connections']['warehouse']['secret']
print('password:', password)
"""


def test_a_printed_password_shows_as_the_connections_name_everywhere(stack, api, session, postgres):
    assert post_json(api, "/api/connections", warehouse(postgres)).status_code == 201
    assert post_json(api, f"/api/sessions/{session.id}/connections", {"name": "warehouse"}).status_code == 201
    stack.script(anthropic_tool_call("run_python", {"code": DIG_OUT}), anthropic_text("Done."))
    assert post_json(api, f"/api/sessions/{session.id}/messages", {"content": "Go"}).status_code == 202
    stored = wait_for(session)

    printed = "".join(e["payload"]["text"] for e in stored if e["type"] == "stdout")
    assert printed == "password: «secret:warehouse»\n"
    assert postgres.password not in json.dumps(stored)
    told = json.dumps(stack.requests[-1].json, ensure_ascii=False)
    assert "password: «secret:warehouse»" in told and postgres.password not in told
    for format in ("ipynb", "html"):
        exported = api.get(f"/api/sessions/{session.id}/export", {"format": format})
        body = b"".join(exported.streaming_content if exported.streaming else [exported.content]).decode()
        assert "secret:warehouse" in body and postgres.password not in body, format
    link = ShareLink.objects.create(session=session)
    shared = Client().get(f"/api/shared/{link.token}/events").content.decode()
    assert "secret:warehouse" in shared and postgres.password not in shared
