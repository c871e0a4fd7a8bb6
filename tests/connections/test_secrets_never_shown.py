"""A connection's secret is in no answer of the API, and not in the database in the clear: the
row holds it sealed, which only the configured key opens."""

from __future__ import annotations

from django.db import connection as database

from analyst.connections import attachments, registry, sealing
from analyst.models import Connection
from tests.connections.conftest import SECRET, WAREHOUSE, patch_json, post_json


def raw_rows() -> str:
    """Every column of every connection row, as the database holds it."""
    with database.cursor() as cursor:
        cursor.execute(f"select * from {Connection._meta.db_table}")
        return repr(cursor.fetchall())


def test_the_secret_is_in_no_answer_and_sealed_at_rest(api, alice, session, no_sandboxd):
    answers = []
    made = post_json(api, "/api/connections", WAREHOUSE)
    answers.append(made)
    path = f"/api/connections/{made.json()['connection']['id']}"
    answers.append(api.get("/api/connections"))
    answers.append(api.get(path))
    answers.append(patch_json(api, path, {"read_only": False}))
    answers.append(post_json(api, f"/api/sessions/{session.id}/connections", {"name": "warehouse"}))
    answers.append(api.get(f"/api/sessions/{session.id}/connections"))
    answers.append(api.post(f"{path}/test"))
    assert [a.status_code for a in answers] == [201, 200, 200, 200, 201, 200, 200]
    for answer in answers:
        assert SECRET not in answer.content.decode(), answer.content

    rows = raw_rows()
    assert "warehouse" in rows  # the row read is the one made
    assert SECRET not in rows
    stored = Connection.objects.get()
    assert stored.secret_sealed and SECRET not in stored.secret_sealed
    assert sealing.unseal(stored.secret_sealed) == SECRET
    assert registry.secret_of(stored) == SECRET
    assert attachments.secrets_of(session) == {"warehouse": SECRET}

    changed = patch_json(api, path, {"secret": "another-Secret-42"})
    assert "another-Secret-42" not in changed.content.decode()
    assert "another-Secret-42" not in raw_rows()
    assert attachments.secrets_of(session) == {"warehouse": "another-Secret-42"}
