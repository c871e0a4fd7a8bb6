"""Attached while the session's kernel runs, a connection reaches it at once: a SQLite database is
put in the sandbox (.connections/shop.sqlite: never listed nor downloaded, not even by its owner,
who has it), its schema read there, and the next cell queries it;
detached, the file is gone and the kernel no longer knows the name; and a kernel restored from a
snapshot taken while it was attached has its copy taken out."""

from __future__ import annotations

import json
import sqlite3
import time

from analyst.connections import attachments
from analyst.models import Connection
from analyst.realtime import events
from sandboxes import Sandbox
from tests.api.conftest import BOUNDARY


def shop_database(tmp_path) -> bytes:
    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("create table orders (id integer, amount real)")
        db.executemany("insert into orders values (?, ?)", [(i, i * 2.5) for i in range(1, 8)])
    return path.read_bytes()


def upload_connection(api, content: bytes) -> object:
    body = (
        (
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="name"\r\n\r\nshop\r\n'
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="kind"\r\n\r\nsqlite\r\n'
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="shop.sqlite"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode()
        + content
        + f"\r\n--{BOUNDARY}--\r\n".encode()
    )
    return api.post("/api/connections", body, content_type=f"multipart/form-data; boundary={BOUNDARY}")


ENDINGS = ["turn_done", "turn_failed", "turn_cancelled"]


def run_cell(api, session, code: str) -> str:
    """What the cell printed (stdout, then stderr), then its error's value, if any."""
    asked = api.post(f"/api/sessions/{session.id}/cells", json.dumps({"code": code}), "application/json")
    assert asked.status_code == 202, asked.content
    turn = asked.json()["turn"]
    deadline = time.monotonic() + 90
    while not session.events.filter(turn_id=turn, type__in=ENDINGS).exists():
        assert time.monotonic() < deadline, "the cell did not end"
        time.sleep(0.05)
    mine = [e for e in events.after(session.id, 0) if e.get("turn") == turn]
    out = "".join(e["payload"].get("text", "") for e in mine if e["type"] in ("stdout", "stderr"))
    errors = " ".join(str(e["payload"].get("value", "")) for e in mine if e["type"] == "error")
    return out + errors


def test_attach_and_detach_while_the_kernel_runs(stack, api, session, tmp_path):
    assert "2" in run_cell(api, session, "print(1 + 1)")  # the session's sandbox now runs
    session.refresh_from_db()
    assert session.sandbox_id

    assert upload_connection(api, shop_database(tmp_path)).status_code == 201
    attached = api.post(
        f"/api/sessions/{session.id}/connections", json.dumps({"name": "shop"}), "application/json"
    )
    assert attached.status_code == 201, attached.content
    checked = attached.json()["connection"]["checked"]
    assert checked["ok"] is True, checked
    assert [t["name"] for t in Connection.objects.get().schema["tables"]] == ["main.orders"]

    printed = run_cell(api, session, 'print(sql("shop", "select sum(amount) as s from orders")["s"][0])')
    assert printed.strip() == "70.0"
    listed = api.get(f"/api/sessions/{session.id}/files").json()["files"]
    assert not [f for f in listed if "shop" in f["path"]], listed
    served = api.get(f"/api/sessions/{session.id}/files/download", {"path": ".connections/shop.sqlite"})
    assert served.status_code == 404

    connection_id = Connection.objects.get().id
    assert api.delete(f"/api/sessions/{session.id}/connections/{connection_id}").status_code == 204
    printed = run_cell(
        api, session, 'import os\nprint(os.path.exists(".connections/shop.sqlite"))\nsql("shop", "select 1")'
    )
    assert printed.startswith("False")
    assert "no connection named 'shop' is attached to this session" in printed, events.after(session.id, 0)[
        -6:
    ]


def test_a_kernel_restored_without_the_connection_has_no_copy_of_its_database(
    stack, api, session, tmp_path, sandboxd
):
    assert upload_connection(api, shop_database(tmp_path)).status_code == 201
    connection = Connection.objects.get()
    attachments.do_attach(session=session, connection=connection)  # no kernel runs yet
    assert run_cell(api, session, 'print(len(sql("shop", "select * from orders")))').strip() == "7"
    session.refresh_from_db()
    assert session.snapshots.exists()  # taken after the turn, with connections/shop.sqlite in it

    attachments.do_detach(session=session, connection_id=connection.id)  # the kernel left as it is
    Sandbox.kill_by_id(session.sandbox_id, url=sandboxd.url, token=sandboxd.token)
    printed = run_cell(api, session, 'import os\nprint(os.path.exists(".connections/shop.sqlite"))')
    assert printed.strip() == "False"
    assert session.events.filter(type="kernel_restored").exists()  # from the snapshot that held it
