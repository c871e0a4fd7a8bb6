"""Reading a workspace's log: its owners and admins only (404 for a stranger, 403 for another
member), newest first, filtered by user and action, paged by entry id, as JSON lines too; and no
method edits or deletes an entry."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import Client

from analyst.audit.records import record
from analyst.models import AuditEntry, Membership, Workspace
from tests.api.conftest import bearer_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def team(alice: Any) -> Workspace:
    team = Workspace.objects.create(name="Sales")
    Membership.objects.create(workspace=team, user=alice, role="owner")
    return team


@pytest.fixture
def people(team: Workspace) -> dict[str, Any]:
    made = {}
    for name, role in (("bob", "admin"), ("carol", "editor"), ("dave", "viewer")):
        made[name] = get_user_model().objects.create_user(name)
        Membership.objects.create(workspace=team, user=made[name], role=role)
    return made


@pytest.fixture
def entries(team: Workspace, alice: Any, people: dict[str, Any]) -> list[AuditEntry]:
    """Seven entries in the team's log, oldest first, and one in alice's personal workspace."""
    made = []
    for user, action in [
        (alice, "ask"),
        (people["carol"], "ask"),
        (people["carol"], "upload"),
        (alice, "export"),
        (people["carol"], "ask"),
        (people["bob"], "member_add"),
        (alice, "ask"),
    ]:
        made.append(record(action, user=user, workspace=team, target="session:x"))
    record("ask", user=alice, workspace=Workspace.objects.get(personal_of=alice))
    return made


def ids(answer: Any) -> list[int]:
    return [e["id"] for e in answer.json()["entries"]]


def test_newest_first_in_pages_by_id(api: Client, team: Workspace, entries: list[AuditEntry]):
    url = f"/api/workspaces/{team.id}/audit"
    first = api.get(url, {"limit": 3})
    assert first.status_code == 200
    assert ids(first) == [e.id for e in reversed(entries)][:3]
    assert first.json()["next"] == entries[-3].id
    second = api.get(url, {"limit": 3, "before": first.json()["next"]})
    third = api.get(url, {"limit": 3, "before": second.json()["next"]})
    assert ids(second) + ids(third) == [e.id for e in reversed(entries)][3:]
    assert third.json()["next"] is None
    shown = first.json()["entries"][0]
    assert shown == {
        "id": entries[-1].id,
        "at": entries[-1].created_at.isoformat(),
        "user": "alice",
        "action": "ask",
        "target": "session:x",
        "detail": {},
        "address": None,
    }


def test_filtered_by_user_and_by_action(api: Client, team: Workspace, entries: list[AuditEntry]):
    url = f"/api/workspaces/{team.id}/audit"
    assert ids(api.get(url, {"user": "carol"})) == [entries[4].id, entries[2].id, entries[1].id]
    assert ids(api.get(url, {"action": "ask"})) == [
        entries[6].id,
        entries[4].id,
        entries[1].id,
        entries[0].id,
    ]
    assert ids(api.get(url, {"user": "carol", "action": "ask", "limit": 1})) == [entries[4].id]


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ({"action": "drop_tables"}, "unknown action 'drop_tables'"),
        ({"limit": "0"}, "limit must be between 1 and 1000"),
        ({"limit": "many"}, "limit must be a whole number"),
        ({"before": "-4"}, "before must be a whole number"),
    ],
)
def test_a_bad_filter_is_said(api: Client, team: Workspace, query: dict[str, str], said: str):
    for path in ("audit", "audit.jsonl"):
        answer = api.get(f"/api/workspaces/{team.id}/{path}", query)
        assert answer.status_code == 400
        assert said in answer.json()["error"]["message"]


def test_json_lines_hold_the_same_entries(api: Client, team: Workspace, entries: list[AuditEntry]):
    url = f"/api/workspaces/{team.id}/audit"
    streamed = api.get(f"{url}.jsonl", {"user": "carol"})
    assert streamed.status_code == 200 and streamed["Content-Type"] == "application/jsonl"
    lines = [json.loads(line) for line in b"".join(streamed).decode().splitlines()]
    assert lines == api.get(url, {"user": "carol"}).json()["entries"]
    everything = [json.loads(line) for line in b"".join(api.get(f"{url}.jsonl")).decode().splitlines()]
    assert [e["id"] for e in everything] == [e.id for e in reversed(entries)]  # not the personal one
    capped = b"".join(api.get(f"{url}.jsonl", {"limit": 2})).decode().splitlines()
    assert [json.loads(line)["id"] for line in capped] == [entries[-1].id, entries[-2].id]


def test_owners_and_admins_read_others_do_not(
    team: Workspace, people: dict[str, Any], mallory: Any, entries: list[AuditEntry]
):
    for path in ("audit", "audit.jsonl"):
        url = f"/api/workspaces/{team.id}/{path}"
        assert bearer_client(people["bob"]).get(url).status_code == 200
        for member in ("carol", "dave"):
            refused = bearer_client(people[member]).get(url)
            assert refused.status_code == 403
            assert "owners and admins" in refused.json()["error"]["message"]
        assert bearer_client(mallory).get(url).status_code == 404
        assert bearer_client(mallory).get(f"/api/workspaces/{team.id + 999}/{path}").status_code == 404
        assert Client().get(url).status_code == 401


def test_the_page_for_owners_and_admins(team: Workspace, people: dict[str, Any], mallory: Any):
    url = f"/workspaces/{team.id}/audit/"
    page = Client()
    page.force_login(people["bob"])
    shown = page.get(url)
    assert shown.status_code == 200
    html = shown.content.decode()
    assert f'data-api-url="/api/workspaces/{team.id}/audit"' in html and "Export JSON lines" in html
    assert "app/audit.js" in html
    page.force_login(people["carol"])
    assert page.get(url).status_code == 403
    page.force_login(mallory)
    assert page.get(url).status_code == 404


def test_no_method_edits_or_deletes_an_entry(api: Client, team: Workspace, entries: list[AuditEntry]):
    before = list(AuditEntry.objects.values_list("id", "action", "target").order_by("id"))
    for path in ("audit", "audit.jsonl"):
        url = f"/api/workspaces/{team.id}/{path}"
        for method in (api.delete, api.post, api.put, api.patch):
            answer = method(url, json.dumps({"id": entries[0].id}), content_type="application/json")
            assert answer.status_code == 405, (method, path)
        assert api.delete(f"{url}?before={entries[3].id}").status_code == 405
    assert list(AuditEntry.objects.values_list("id", "action", "target").order_by("id")) == before


def test_the_admin_site_edits_and_deletes_no_entry(rf: Any, alice: Any):
    """Not listed there; if it ever is, read-only."""
    alice.is_staff = alice.is_superuser = True
    request = rf.get("/admin/")
    request.user = alice
    listed = admin.site._registry.get(AuditEntry)
    if listed is not None:
        assert not listed.has_add_permission(request)
        assert not listed.has_change_permission(request)
        assert not listed.has_delete_permission(request)
    assert "analyst/auditentry" not in str([str(p.pattern) for p in admin.site.get_urls()])
