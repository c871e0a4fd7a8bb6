"""The connections API: made, listed, read, changed and deleted by their owner, with each kind's
fields checked and refused in words; another user's connection does not exist for them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from analyst.models import Connection
from tests.api.conftest import BOUNDARY
from tests.connections.conftest import WAREHOUSE, make_connection, patch_json, post_json


def sqlite_bytes(tmp_path) -> bytes:
    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("create table orders (id integer, amount real)")
    return path.read_bytes()


def multipart(fields: dict[str, str], filename: str, content: bytes) -> bytes:
    body = b""
    for name, value in fields.items():
        body += f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
    body += (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    return body + content + f"\r\n--{BOUNDARY}--\r\n".encode()


def test_a_postgres_connection_made_listed_read_and_deleted(api, alice):
    made = post_json(api, "/api/connections", WAREHOUSE)
    assert made.status_code == 201, made.content
    connection = made.json()["connection"]
    assert connection["name"] == "warehouse"
    assert connection["kind"] == "postgres"
    assert connection["url"] == "postgresql://analyst@db.internal:5432/sales"
    assert connection["read_only"] is True
    assert connection["has_secret"] is True
    assert connection["file"] is None
    assert connection["sessions"] == 0
    assert connection["checked"] == {} and connection["schema"] == {}
    assert set(connection) == {
        "id", "name", "kind", "url", "read_only", "options", "has_secret", "file", "schema",
        "checked", "dictionary", "workspace", "sessions", "created_at", "updated_at",
    }  # fmt: skip
    assert connection["workspace"] == {"id": alice.personal_workspace.id, "name": "Personal"}

    listed = api.get("/api/connections").json()["connections"]
    assert [c["id"] for c in listed] == [connection["id"]]
    assert api.get(f"/api/connections/{connection['id']}").json()["connection"] == listed[0]

    assert api.delete(f"/api/connections/{connection['id']}").status_code == 204
    assert api.get(f"/api/connections/{connection['id']}").status_code == 404
    assert not Connection.objects.exists()


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"url": "postgresql://analyst:hunter2@db.internal/sales"}, "put the password in secret"),
        ({"url": "postgresql://analyst@db.internal/sales?password=hunter2"}, "put the password in secret"),
        ({"url": "mysql://analyst@db.internal/sales"}, "must start with postgres:// or postgresql://"),
        ({"url": "postgresql://db.internal/sales"}, "must name the user"),
        ({"url": "postgresql://analyst@db.internal"}, "must name the database"),
        ({"url": "postgresql://analyst@db.internal:99999/sales"}, "is not one"),
        ({"url": ""}, "url is required"),
        ({"kind": "oracle"}, "kind must be one of"),
        ({"name": "Ware-House"}, "a lowercase identifier"),
        ({"name": "9lives"}, "a lowercase identifier"),
        ({"read_only": "yes"}, "read_only must be true or false"),
        ({"options": {"sslmode": "require"}}, "takes no option 'sslmode'"),
        ({"options": {"password": "x"}}, "put the password in secret"),
        ({"colour": "blue"}, "no field 'colour'"),
    ],
)
def test_a_postgres_connection_refused_in_words(api, fields, said):
    refused = post_json(api, "/api/connections", {**WAREHOUSE, **fields})
    assert refused.status_code == 400, refused.content
    assert refused.json()["error"]["code"] == "invalid_connection"
    assert said in refused.json()["error"]["message"]
    assert not Connection.objects.exists()


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"kind": "s3", "url": "", "options": {"bucket": "b"}}, "needs the store's endpoint_url"),
        (
            {"kind": "s3", "url": "", "options": {"endpoint_url": "https://s3.example.com"}},
            "needs its bucket",
        ),
        (
            {
                "kind": "s3",
                "url": "",
                "options": {"endpoint_url": "https://x", "bucket": "b", "secret_key": "k"},
            },
            "put the secret_key in secret",
        ),
        ({"kind": "http", "url": "ftp://api.example.com"}, "must start with http:// or https://"),
        ({"kind": "http", "url": "https://u:p@api.example.com"}, "put the password in secret"),
        (
            {"kind": "http", "url": "https://api.example.com", "options": {"header": "X Bad"}},
            "header must be",
        ),
        ({"kind": "sqlite", "url": ""}, "send it as file"),
    ],
)
def test_other_kinds_refused_in_words(api, fields, said):
    refused = post_json(api, "/api/connections", {**WAREHOUSE, **fields})
    assert refused.status_code == 400, refused.content
    assert said in refused.json()["error"]["message"]


def test_mysql_s3_and_http_connections(api):
    mysql = post_json(api, "/api/connections", {**WAREHOUSE, "name": "shop", "kind": "mysql",
                                                 "url": "mariadb://reader@10.0.0.7/shop"})  # fmt: skip
    assert mysql.status_code == 201, mysql.content
    s3 = post_json(
        api,
        "/api/connections",
        {"name": "lake", "kind": "s3", "secret": "sk", "options": {
            "endpoint_url": "http://127.0.0.1:9000", "bucket": "raw", "prefix": "2024/", "key_id": "AKIA1"}},
    )  # fmt: skip
    assert s3.status_code == 201, s3.content
    assert s3.json()["connection"]["options"] == {
        "endpoint_url": "http://127.0.0.1:9000", "bucket": "raw", "prefix": "2024/", "key_id": "AKIA1",
    }  # fmt: skip
    http = post_json(
        api, "/api/connections", {"name": "crm", "kind": "http", "url": "https://crm.example/api"}
    )
    assert http.status_code == 201, http.content
    assert http.json()["connection"]["options"] == {"header": "Authorization", "scheme": "Bearer"}
    assert http.json()["connection"]["has_secret"] is False
    assert [c["name"] for c in api.get("/api/connections").json()["connections"]] == ["crm", "lake", "shop"]


def test_a_sqlite_connection_is_a_file(api, media, tmp_path, django_capture_on_commit_callbacks):
    fields = {"name": "shop", "kind": "sqlite", "read_only": "false"}
    database = sqlite_bytes(tmp_path)
    made = api.post(
        "/api/connections",
        multipart(fields, "shop.sqlite", database),
        content_type=f"multipart/form-data; boundary={BOUNDARY}",
    )
    assert made.status_code == 201, made.content
    connection = made.json()["connection"]
    assert connection["read_only"] is False
    assert connection["file"]["name"].endswith(".sqlite")
    assert connection["file"]["size"] == len(database)
    stored = Path(Connection.objects.get().file.path)
    assert stored.read_bytes() == database
    with django_capture_on_commit_callbacks(execute=True):
        assert api.delete(f"/api/connections/{connection['id']}").status_code == 204
    assert not stored.exists()

    refused = api.post(
        "/api/connections",
        multipart(fields, "shop.sqlite", b"name,amount\nx,1\n"),
        content_type=f"multipart/form-data; boundary={BOUNDARY}",
    )
    assert refused.status_code == 400
    assert refused.json()["error"]["message"] == "the file is not a SQLite database"


def test_a_name_is_one_connection_per_owner(api, stranger_api):
    assert post_json(api, "/api/connections", WAREHOUSE).status_code == 201
    taken = post_json(api, "/api/connections", WAREHOUSE)
    assert taken.status_code == 400
    assert taken.json()["error"] == {
        "code": "name_taken",
        "message": "you already have a connection named 'warehouse'",
    }
    assert post_json(stranger_api, "/api/connections", WAREHOUSE).status_code == 201  # theirs


def test_patch_changes_any_field_and_an_empty_secret_keeps_it(api, alice):
    connection = make_connection(alice)
    sealed = connection.secret_sealed
    Connection.objects.filter(id=connection.id).update(checked={"ok": True}, schema={"tables": []})
    path = f"/api/connections/{connection.id}"

    renamed = patch_json(api, path, {"name": "sales", "read_only": False, "secret": ""})
    assert renamed.status_code == 200, renamed.content
    body = renamed.json()["connection"]
    assert (body["name"], body["read_only"], body["has_secret"]) == ("sales", False, True)
    connection.refresh_from_db()
    assert connection.secret_sealed == sealed
    assert connection.checked == {"ok": True}  # it leads to the same place: what Test found holds

    moved = patch_json(api, path, {"url": "postgresql://analyst@db2.internal/sales"})
    assert moved.status_code == 200
    assert moved.json()["connection"]["checked"] == {}  # elsewhere now: tested again

    patch_json(api, path, {"secret": "new-one"})
    connection.refresh_from_db()
    assert connection.secret_sealed != sealed

    refused = patch_json(api, path, {"url": "postgresql://analyst:pw@db.internal/sales"})
    assert refused.status_code == 400
    assert "put the password in secret" in refused.json()["error"]["message"]
    assert patch_json(api, path, {"kind": "sqlite"}).status_code == 400


def test_another_users_connection_is_not_found(api, stranger_api, alice, no_sandboxd):
    connection = make_connection(alice)
    path = f"/api/connections/{connection.id}"
    answers = [
        stranger_api.get(path),
        patch_json(stranger_api, path, {"name": "mine"}),
        stranger_api.delete(path),
        stranger_api.post(f"{path}/test"),
    ]
    assert [a.status_code for a in answers] == [404, 404, 404, 404]
    assert stranger_api.get("/api/connections").json() == {"connections": []}
    connection.refresh_from_db()
    assert connection.name == "warehouse"
    assert api.get(path).status_code == 200


def test_a_test_without_a_sandbox_says_why(api, alice, no_sandboxd):
    connection = make_connection(alice)
    tested = api.post(f"/api/connections/{connection.id}/test")
    assert tested.status_code == 200
    body = tested.json()
    assert body["ok"] is False
    assert body["category"] == "unavailable"
    assert body["message"].startswith("No sandbox could be started to test the connection")
    connection.refresh_from_db()
    assert connection.checked["ok"] is False
    assert connection.checked["message"] == body["message"]
