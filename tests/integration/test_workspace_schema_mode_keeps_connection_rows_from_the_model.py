"""A workspace in schema mode keeps a connection's rows from the model: a real SQLite database
attached to a session of the workspace (whose own setting says full), read by the model's cells
with %%sql, sql() kept in a variable, printed, listed, and in a later turn printed again, and
sql() printed without being kept. No customer's name or e-mail reaches the model server in any
request, while the page's events show them all; an aggregate the model asks for still reaches it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from analyst.models import AnalysisSession, Membership, Workspace
from analyst.models.workspaces import Role
from tests.fakes.model_server import anthropic_text, anthropic_tool_call
from tests.integration.conftest import wait_for
from tests.integration.test_private_data_kept_from_the_model import EMAILS, NAMES, _leaked
from tests.printed import printed

AMOUNTS = [10 * (i + 1) for i in range(len(NAMES))]
TOTAL = sum(AMOUNTS)  # 360: an aggregate, which the model may read


def post_json(api, path: str, body: dict):
    return api.post(path, json.dumps(body), "application/json")


def customers_database(folder: Path) -> Path:
    path = folder / "crm.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("create table customers (id integer primary key, name text, email text, amount integer)")
        rows = zip(range(1, len(NAMES) + 1), NAMES, EMAILS, AMOUNTS, strict=True)
        db.executemany("insert into customers values (?, ?, ?, ?)", rows)
    db.close()
    return path


def ask(stack, api, session: AnalysisSession, question: str, *script: dict) -> list[dict]:
    ended = session.events.filter(type="turn_done").count()
    stack.script(*script)
    assert post_json(api, f"/api/sessions/{session.id}/messages", {"content": question}).status_code == 202
    log = wait_for(session)
    while sum(e["type"] == "turn_done" for e in log) <= ended:
        assert log[-1]["type"] not in ("turn_failed", "turn_cancelled"), log[-5:]
        log = wait_for(session)
    return log


def tool_results(request_json: dict) -> list[str]:
    return [
        "\n".join(part["text"] for part in block["content"] if part["type"] == "text")
        for message in request_json["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block["type"] == "tool_result"
    ]


def test_a_schema_mode_workspace_sends_no_row_of_a_connection(stack, api, alice, tmp_path):
    sales = Workspace.objects.create(name="Sales", privacy="schema")
    Membership.objects.create(workspace=sales, user=alice, role=Role.OWNER)
    made = post_json(api, "/api/sessions", {"workspace": sales.id})
    assert made.status_code == 201, made.content
    session = AnalysisSession.objects.get(id=made.json()["id"])
    assert session.privacy == "full", "the session's own setting: the workspace's wins"

    with customers_database(tmp_path).open("rb") as file:
        connection = api.post(
            "/api/connections", {"name": "crm", "kind": "sqlite", "file": file, "workspace": sales.id}
        )
    assert connection.status_code == 201, connection.content
    tested = api.post(f"/api/connections/{connection.json()['connection']['id']}/test")
    assert tested.json()["ok"] is True, tested.content
    attached = post_json(api, f"/api/sessions/{session.id}/connections", {"name": "crm"})
    assert attached.status_code == 201, attached.content

    log = ask(
        stack,
        api,
        session,
        "Who are our customers?",
        anthropic_tool_call(  # first, before any table holds them: printed, never kept nor displayed
            "run_python",
            {"code": 'print(sql("crm", "select email from customers where amount > 40").to_string())'},
            tool_id="toolu_00",
        ),
        anthropic_tool_call("run_python", {"code": "%%sql crm\nselect * from customers"}),
        anthropic_tool_call(
            "run_python",
            {"code": 'df = sql("crm", "select name, email, amount from customers")\nprint(df)\ndf'},
            tool_id="toolu_02",
        ),
        anthropic_tool_call("run_python", {"code": "print(df['email'].tolist())"}, tool_id="toolu_03"),
        anthropic_tool_call(
            "run_python",
            {"code": 'print(sql("crm", "select count(*) as n, sum(amount) as total from customers"))'},
            tool_id="toolu_04",
        ),
        anthropic_text("There are 8 customers; they spent 360 in all."),
    )
    log = ask(
        stack,
        api,
        session,
        "And their names?",
        anthropic_tool_call("run_python", {"code": "print(df.name.tolist())"}, tool_id="toolu_05"),
        anthropic_text("I cannot read their names in this workspace."),
    )

    assert len(stack.requests) == 8
    shown = printed(log) + json.dumps([e["payload"] for e in log if e["type"] == "result"])
    assert all(name in shown for name in NAMES), "the page shows every name"
    assert all(email in shown for email in EMAILS), "and every e-mail"
    assert _leaked(stack, NAMES + EMAILS) == [], "no request to the model holds a name or an e-mail"

    last = stack.requests[-1].json
    system = last["system"] if isinstance(last["system"], str) else "".join(p["text"] for p in last["system"])
    assert "schema mode" in system, "the model is told what it does not see"
    assert "- main.customers: id INTEGER, name TEXT, email TEXT, amount INTEGER" in system
    results = tool_results(last)
    assert len(results) == 6
    assert results[0].count("«col:email»") == 4, "a query's rows printed and never kept"
    assert "[a table of 8 rows x 4 columns; its rows are withheld from you]" in results[1]
    assert "amount (integer: min 10, max 80" in results[1], "numeric summaries of a query's table"
    assert "«col:name»" in results[2] and "«col:email»" in results[2] and "[privacy: " in results[2]
    assert results[3].count("«col:email»") == 8
    assert str(TOTAL) in results[4], "an aggregate reaches the model"
    assert results[5].count("«col:name»") == 8, "a later turn's print of the kept frame too"
