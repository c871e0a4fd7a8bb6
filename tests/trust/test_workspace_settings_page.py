"""The workspace page's settings: its admins and owners edit the instructions and privacy with a
form, other members read them (escaped, never as markup), a refused POST is a 403 saying why."""

from __future__ import annotations

import pytest
from django.test import Client

from analyst.models import AuditEntry
from tests.workspaces.conftest import user

pytestmark = pytest.mark.django_db

HOSTILE = 'Use EUR. <script>alert("x")</script><img src=x onerror=alert(1)>'


def browser(name: str) -> Client:
    client = Client()
    client.force_login(user(name))
    return client


def test_an_admin_edits_them_with_the_form(team):
    client = browser("adam")
    page = client.get(f"/workspaces/{team.id}/").content.decode()
    assert 'data-testid="workspace-settings-form"' in page
    answer = client.post(f"/workspaces/{team.id}/", {"instructions": " Use EUR. ", "privacy": "schema"})
    assert answer.status_code == 302
    team.refresh_from_db()
    assert (team.instructions, team.privacy) == ("Use EUR.", "schema")
    assert {e.action for e in AuditEntry.objects.exclude(action="sign_in")} == {
        "workspace_instructions",
        "workspace_privacy",
    }

    client.post(f"/workspaces/{team.id}/", {"instructions": "Use EUR."})  # the box unticked
    team.refresh_from_db()
    assert (team.instructions, team.privacy) == ("Use EUR.", "")
    assert AuditEntry.objects.filter(action="workspace_instructions").count() == 1, "unchanged: not again"


def test_too_long_instructions_are_shown_back_and_change_nothing(team):
    answer = browser("olga").post(
        f"/workspaces/{team.id}/", {"instructions": "x" * 5000, "privacy": "schema"}
    )
    assert answer.status_code == 400
    assert b'data-testid="workspace-settings-error"' in answer.content
    team.refresh_from_db()
    assert (team.instructions, team.privacy) == ("", "")


@pytest.mark.parametrize("name", ["eve", "vic"])
def test_other_members_read_them_escaped_and_may_not_post(team, name):
    team.instructions, team.privacy = HOSTILE, "schema"
    team.save()
    client = browser(name)
    page = client.get(f"/workspaces/{team.id}/").content.decode()
    assert 'data-testid="workspace-settings-form"' not in page
    assert (
        "Use EUR. &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in page
    )
    assert "<script>alert" not in page and "<img src=x" not in page
    assert "Schema mode for every session" in page

    refused = client.post(f"/workspaces/{team.id}/", {"instructions": "", "privacy": ""})
    assert refused.status_code == 403
    assert b'data-testid="forbidden-why"' in refused.content and b"of Team" in refused.content
    team.refresh_from_db()
    assert (team.instructions, team.privacy) == (HOSTILE, "schema")


def test_a_stranger_gets_404(team, mallory):
    client = Client()
    client.force_login(mallory)
    assert client.get(f"/workspaces/{team.id}/").status_code == 404
    assert client.post(f"/workspaces/{team.id}/", {"instructions": "mine"}).status_code == 404
    team.refresh_from_db()
    assert team.instructions == ""
