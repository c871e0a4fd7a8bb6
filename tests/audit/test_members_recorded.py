"""Members added, given another role and removed, through the workspaces API: each once, by whom,
naming the member and the role."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from analyst.models import Membership, Workspace
from tests.audit.conftest import ALICE_ADDRESS, only, post_json

pytestmark = pytest.mark.django_db


def test_a_member_added_given_a_role_and_removed(api: Client, alice: Any):
    team = Workspace.objects.create(name="Sales")
    Membership.objects.create(workspace=team, user=alice, role="owner")
    bob = get_user_model().objects.create_user("bob")
    added = post_json(api, f"/api/workspaces/{team.id}/members", {"username": "bob", "role": "viewer"})
    assert added.status_code == 201, added.content
    entry = only("member_add")
    assert (entry.username, entry.address, entry.workspace_id) == ("alice", ALICE_ADDRESS, team.id)
    assert (entry.target, entry.detail) == (f"user:{bob.id}", {"username": "bob", "role": "viewer"})

    url = f"/api/workspaces/{team.id}/members/{added.json()['id']}"
    assert api.patch(url, json.dumps({"role": "editor"}), "application/json").status_code == 200
    assert only("member_role").detail == {"username": "bob", "role": "editor", "was": "viewer"}

    assert api.delete(url).status_code == 200
    removed = only("member_remove")
    assert (removed.username, removed.target, removed.detail) == (
        "alice",
        f"user:{bob.id}",
        {"username": "bob", "role": "editor"},
    )
