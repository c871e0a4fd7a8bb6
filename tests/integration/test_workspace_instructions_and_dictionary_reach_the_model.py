"""Through the whole stack: in a session of a team workspace, the system prompt the model receives
gives the workspace's instructions (labelled with its name) before the instructions of the member
who asks (an editor's own, not the session owner's), and the data dictionary of the workspace's
connection under its table."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from django.contrib.auth import get_user_model
from django.test import Client

from analyst.models import AnalysisSession, ApiToken, Membership, Workspace
from analyst.models.workspaces import Role
from tests.integration.test_instructions_and_dictionary_reach_the_model import ask

TEAM = "Our fiscal year starts on 1 April.\nAmounts are in EUR."
ALICE = "Alice likes pie charts."
EVE = "Eve wants every answer as a table."
NET = "net revenue in EUR, before VAT"


def put(client: Client, path: str, body: dict):
    return client.put(path, json.dumps(body), "application/json")


def orders_database(folder: Path) -> Path:
    path = folder / "shop.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("create table orders (id integer primary key, net real)")
        db.execute("insert into orders values (1, 9.5)")
    db.close()
    return path


def test_the_workspace_s_and_the_asking_member_s_instructions_and_the_dictionary(stack, api, alice, tmp_path):
    sales = Workspace.objects.create(name="Sales")
    Membership.objects.create(workspace=sales, user=alice, role=Role.OWNER)
    eve = get_user_model().objects.create_user("eve", password="pw")
    Membership.objects.create(workspace=sales, user=eve, role=Role.EDITOR)
    eve_api = Client(HTTP_AUTHORIZATION=f"Bearer {ApiToken.issue(eve)[1]}")

    assert put(api, f"/api/workspaces/{sales.id}/instructions", {"text": TEAM}).status_code == 200
    assert put(api, "/api/instructions", {"text": ALICE}).status_code == 200
    assert put(eve_api, "/api/instructions", {"text": EVE}).status_code == 200
    made = api.post("/api/sessions", json.dumps({"workspace": sales.id}), "application/json")
    session = AnalysisSession.objects.get(id=made.json()["id"])

    with orders_database(tmp_path).open("rb") as file:
        connection = api.post(
            "/api/connections", {"name": "shop", "kind": "sqlite", "file": file, "workspace": sales.id}
        )
    connection_id = connection.json()["connection"]["id"]
    assert api.post(f"/api/connections/{connection_id}/test").json()["ok"] is True
    dictionary = {"tables": {"main.orders": {"text": "One row per order.", "columns": {"net": NET}}}}
    described = api.patch(
        f"/api/connections/{connection_id}", json.dumps({"dictionary": dictionary}), "application/json"
    )
    assert described.status_code == 200, described.content
    attached = api.post(
        f"/api/sessions/{session.id}/connections", json.dumps({"name": "shop"}), "application/json"
    )
    assert attached.status_code == 201, attached.content

    system = ask(stack, eve_api, session, "What is the net revenue?")
    if not isinstance(system, str):
        system = "".join(part["text"] for part in system)
    assert "- main.orders: id INTEGER, net REAL\n  the user says: One row per order.\n" in system
    assert f"  column 'net': {NET}" in system
    assert (
        "Instructions of the workspace Sales (set by its admins, for every session in it; follow them"
        f" unless the user asks otherwise here):\n{TEAM}" in system
    )
    assert f"follow them unless they ask otherwise here):\n{EVE}" in system, "the asking editor's own"
    assert ALICE not in system, "not the owner's: she did not ask"
    assert system.index(TEAM) < system.index(EVE)

    system = ask(stack, api, session, "And for me?")
    system = system if isinstance(system, str) else "".join(part["text"] for part in system)
    assert ALICE in system and EVE not in system and TEAM in system
