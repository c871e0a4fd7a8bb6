"""Each action that reads or changes a workspace's data is recorded once, through the real code
paths (the JSON API and the pages): who, what, in which workspace, from which address."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from django.test import Client

from analyst.models import AnalysisSession, AuditEntry, Membership, ShareLink, Workspace
from analyst.models.workspaces import Role
from tests.api.conftest import upload
from tests.audit.conftest import ALICE_ADDRESS, only, post_json, recorded

pytestmark = pytest.mark.django_db

WAREHOUSE = {"name": "warehouse", "kind": "postgres", "url": "postgresql://analyst@db.internal:5432/sales"}


def assert_by_alice(entry: AuditEntry, workspace: Workspace, target: str) -> None:
    assert (entry.username, entry.user_id) == ("alice", workspace.personal_of_id)
    assert entry.workspace_id == workspace.id
    assert entry.target == target
    assert entry.address == ALICE_ADDRESS


def test_a_question_and_a_cell_with_the_code_hashed_never_kept(
    api: Client, session: Any, personal: Workspace
):
    assert (
        post_json(api, f"/api/sessions/{session.id}/messages", {"content": "How many rows?"}).status_code
        == 202
    )
    asked = only("ask")
    assert_by_alice(asked, personal, f"session:{session.id}")
    assert asked.detail == {"turn": session.turns.get().id}

    session.turns.update(status="done")  # one turn at a time: the question's ended
    code = "secret_sauce = 42\nprint(secret_sauce)"
    assert post_json(api, f"/api/sessions/{session.id}/cells", {"code": code}).status_code == 202
    ran = only("cell_run")
    assert_by_alice(ran, personal, f"session:{session.id}")
    assert ran.detail["sha256"] == hashlib.sha256(code.encode()).hexdigest()
    assert "secret_sauce" not in str(AuditEntry.objects.values_list("detail", "target"))
    assert recorded("connection_use") == []  # no connection attached, none used


def test_a_session_in_a_team_workspace_records_there(api: Client, session: Any, alice: Any):
    team = Workspace.objects.create(name="Sales")
    Membership.objects.create(workspace=team, user=alice, role=Role.EDITOR)  # sessions there are members'
    session.workspace = team
    session.save(update_fields=["workspace"])
    post_json(api, f"/api/sessions/{session.id}/messages", {"content": "Totals?"})
    assert only("ask").workspace_id == team.id


def test_an_upload_and_its_download(api: Client, session: Any, personal: Workspace, media: Any):
    assert upload(api, session, "sales.csv", b"region,total\nnorth,3\n").status_code == 202
    uploaded = only("upload")
    assert_by_alice(uploaded, personal, f"session:{session.id}")
    assert uploaded.detail == {"file": session.files.get().id, "name": "sales.csv", "size": 21}

    got = api.get(f"/api/sessions/{session.id}/files/download", {"path": "data/sales.csv"})
    assert got.status_code == 200 and b"".join(got) == b"region,total\nnorth,3\n"
    assert only("download").detail == {"path": "data/sales.csv"}
    assert_by_alice(only("download"), personal, f"session:{session.id}")


def test_an_export(api: Client, session: Any, personal: Workspace):
    assert api.get(f"/api/sessions/{session.id}/export", {"format": "py"}).status_code == 200
    exported = only("export")
    assert_by_alice(exported, personal, f"session:{session.id}")
    assert exported.detail == {"format": "py", "bundle": ""}


def test_an_unknown_export_format_is_not_recorded(api: Client, session: Any):
    assert api.get(f"/api/sessions/{session.id}/export", {"format": "docx"}).status_code == 400
    assert recorded("export") == []


def test_a_share_link_made_and_revoked_on_the_page(alice: Any, session: Any, personal: Workspace):
    page = Client(REMOTE_ADDR=ALICE_ADDRESS)
    page.force_login(alice)
    page.post(f"/sessions/{session.id}/share", {"allow_downloads": "on"})
    link = ShareLink.objects.get(session=session)
    made = only("share_create")
    assert_by_alice(made, personal, f"session:{session.id}")
    assert made.detail == {"link": link.id, "allow_downloads": True, "allow_fork_state": False}

    page.post(f"/sessions/{session.id}/share/{link.id}/revoke")
    page.post(f"/sessions/{session.id}/share/{link.id}/revoke")  # revoked already: nothing more
    assert only("share_revoke").detail == {"link": link.id}


def test_a_fork_through_a_share_link_is_recorded_in_the_source_workspace(
    session: Any, personal: Workspace, mallory: Any
):
    link = ShareLink.objects.create(session=session, allow_downloads=False)
    visitor = Client(REMOTE_ADDR="127.0.0.9")
    visitor.force_login(mallory)
    assert visitor.post(f"/s/{link.token}/fork").status_code == 302
    forked = only("fork")
    assert (forked.username, forked.workspace_id, forked.address) == ("mallory", personal.id, "127.0.0.9")
    assert forked.target == f"session:{session.id}"
    assert forked.detail["fork"] == str(AnalysisSession.objects.get(owner=mallory).id)


def test_a_fork_through_the_api(api: Client, session: Any, personal: Workspace):
    made = api.post(f"/api/sessions/{session.id}/fork")
    assert made.status_code == 201
    assert only("fork").detail == {"fork": made.json()["id"], "files": True, "kernel_state": True}


def test_connections_made_tested_attached_used_and_detached(
    api: Client, session: Any, personal: Workspace, no_sandboxd: str
):
    made = post_json(api, "/api/connections", WAREHOUSE).json()["connection"]
    target = f"connection:{made['id']}"
    assert_by_alice(only("connection_create"), personal, target)
    assert only("connection_create").detail == {"name": "warehouse", "kind": "postgres"}

    tested = api.post(f"/api/connections/{made['id']}/test").json()
    assert tested["ok"] is False  # no sandboxd to test from: still a Test, recorded
    assert_by_alice(only("connection_test"), personal, target)
    assert only("connection_test").detail == {"name": "warehouse", "ok": False, "category": "unavailable"}

    assert post_json(api, f"/api/sessions/{session.id}/connections", {"name": "warehouse"}).status_code == 201
    post_json(api, f"/api/sessions/{session.id}/connections", {"name": "warehouse"})  # attached already
    assert_by_alice(only("connection_attach"), personal, f"session:{session.id}")
    assert only("connection_attach").detail == {"connection": made["id"], "name": "warehouse"}

    post_json(api, f"/api/sessions/{session.id}/messages", {"content": "Sales by region?"})
    used = only("connection_use")
    assert_by_alice(used, personal, f"session:{session.id}")
    assert used.detail == {
        "turn": session.turns.get().id,
        "connections": [{"id": made["id"], "name": "warehouse"}],
    }

    assert api.delete(f"/api/sessions/{session.id}/connections/{made['id']}").status_code == 204
    assert only("connection_detach").detail == {"connection": made["id"], "name": "warehouse"}


def test_session_secrets_set_and_deleted_by_name_only(api: Client, session: Any, personal: Workspace):
    value = "tok-9f8e7d6c5b4a"
    body = {"name": "STRIPE_KEY", "value": value}
    assert post_json(api, f"/api/sessions/{session.id}/secrets", body).status_code in (200, 201)
    assert_by_alice(only("secret_set"), personal, f"session:{session.id}")
    assert only("secret_set").detail == {"name": "STRIPE_KEY"}
    assert api.delete(f"/api/sessions/{session.id}/secrets/STRIPE_KEY").status_code == 204
    assert api.delete(f"/api/sessions/{session.id}/secrets/STRIPE_KEY").status_code == 404
    assert only("secret_delete").detail == {"name": "STRIPE_KEY"}
    assert value not in str(list(AuditEntry.objects.values_list("detail", flat=True)))


def test_a_refused_action_records_nothing(api: Client, stranger_api: Client, session: Any):
    assert (
        post_json(stranger_api, f"/api/sessions/{session.id}/messages", {"content": "hi"}).status_code == 404
    )
    assert stranger_api.get(f"/api/sessions/{session.id}/export", {"format": "py"}).status_code == 404
    assert AuditEntry.objects.exclude(action__in=["sign_in"]).count() == 0
