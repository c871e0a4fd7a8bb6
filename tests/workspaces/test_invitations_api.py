"""Invitations: by link (its token shown once) or by e-mail, expiring, used once, revoked."""

from __future__ import annotations

import datetime
import re

import pytest
from django.core import mail
from django.test import Client
from django.utils import timezone

from analyst.models import Membership, WorkspaceInvitation
from tests.workspaces.conftest import bearer_client, client_of, make_user

pytestmark = pytest.mark.django_db


def invite(name: str, workspace, body: dict):
    return client_of(name).post(f"/api/workspaces/{workspace.id}/invitations", body, "application/json")


def token_of(url: str) -> str:
    (token,) = re.findall(r"/invitations/([^/]+)/$", url)
    return token


def accept(user, token: str):
    return bearer_client(user).post(f"/api/invitations/{token}/accept")


def test_a_link_makes_its_holder_a_member_once(team, mallory):
    made = invite("adam", team, {"role": "editor"})
    assert made.status_code == 201
    body = made.json()
    assert body["url"].startswith("http://testserver/invitations/")
    assert body["role"] == "editor"
    token = token_of(body["url"])
    assert token not in str(WorkspaceInvitation.objects.values_list())  # only its hash is kept
    listed = client_of("adam").get(f"/api/workspaces/{team.id}/invitations").json()["invitations"]
    assert [i["id"] for i in listed] == [body["id"]]
    assert "url" not in listed[0] and token not in str(listed)
    accepted = accept(mallory, token)
    assert accepted.status_code == 200
    assert accepted.json()["workspace"] == {
        "id": team.id,
        "name": "Team",
        "personal": False,
        "role": "editor",
    }
    assert Membership.objects.get(workspace=team, user=mallory).role == "editor"
    again = accept(make_user("nina"), token)
    assert again.status_code == 410
    assert again.json()["error"]["message"] == "this invitation has been used already: ask for a new one"
    assert not Membership.objects.filter(workspace=team, user__username="nina").exists()
    assert client_of("adam").get(f"/api/workspaces/{team.id}/invitations").json()["invitations"] == []


def test_an_email_holds_the_link(team, mallory, settings, django_capture_on_commit_callbacks):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    mail.outbox = []
    with django_capture_on_commit_callbacks(execute=True):  # sent once the invitation is committed
        made = invite("olga", team, {"role": "viewer", "email": "mallory@example.test"})
        assert mail.outbox == []
    assert made.status_code == 201
    (message,) = mail.outbox
    assert message.to == ["mallory@example.test"]
    assert "Team" in message.subject and "olga" in message.subject
    assert made.json()["url"] in message.body
    assert made.json()["url"] in message.alternatives[0][0]
    assert accept(mallory, token_of(made.json()["url"])).status_code == 200
    assert Membership.objects.get(workspace=team, user=mallory).role == "viewer"


def test_an_expired_or_unknown_token_says_so(team, mallory):
    made = invite("olga", team, {"role": "viewer"}).json()
    WorkspaceInvitation.objects.filter(id=made["id"]).update(
        expires_at=timezone.now() - datetime.timedelta(seconds=1)
    )
    expired = accept(mallory, token_of(made["url"]))
    assert expired.status_code == 410
    assert expired.json()["error"]["message"] == "this invitation has expired: ask for a new one"
    unknown = accept(mallory, "not-a-token")
    assert unknown.status_code == 410
    assert "does not exist" in unknown.json()["error"]["message"]
    assert not Membership.objects.filter(workspace=team, user=mallory).exists()


def test_it_expires_after_the_setting(team, settings):
    settings.ANALYST_INVITATION_DAYS = 3
    made = invite("olga", team, {"role": "viewer"}).json()
    expires = datetime.datetime.fromisoformat(made["expires_at"])
    assert datetime.timedelta(days=3) - datetime.timedelta(minutes=1) < expires - timezone.now()
    assert expires - timezone.now() <= datetime.timedelta(days=3)


def test_accepting_when_a_member_already_changes_nothing(team):
    made = invite("olga", team, {"role": "admin"}).json()
    vic = client_of("vic").post(f"/api/invitations/{token_of(made['url'])}/accept")
    assert vic.status_code == 200
    assert vic.json()["workspace"]["role"] == "viewer"
    assert Membership.objects.get(workspace=team, user__username="vic").role == "viewer"
    assert WorkspaceInvitation.objects.get(id=made["id"]).accepted_at is None


def test_accepting_needs_an_account(team):
    token = token_of(invite("olga", team, {"role": "viewer"}).json()["url"])
    assert Client().post(f"/api/invitations/{token}/accept").status_code == 401


def test_who_may_invite_and_for_which_role(team):
    assert invite("eve", team, {"role": "viewer"}).status_code == 403
    assert invite("vic", team, {"role": "viewer"}).status_code == 403
    assert client_of("eve").get(f"/api/workspaces/{team.id}/invitations").status_code == 403
    assert invite("adam", team, {"role": "admin"}).status_code == 403
    assert invite("olga", team, {"role": "admin"}).status_code == 201
    bad = invite("olga", team, {"role": "viewer", "email": "not-an-address"})
    assert bad.status_code == 400
    assert WorkspaceInvitation.objects.count() == 1


def test_a_personal_workspace_takes_no_invitation(mallory):
    personal = mallory.personal_workspace
    answer = bearer_client(mallory).post(
        f"/api/workspaces/{personal.id}/invitations", {"role": "viewer"}, "application/json"
    )
    assert answer.status_code == 409
    assert not WorkspaceInvitation.objects.exists()


def test_a_revoked_invitation_no_longer_works(team, mallory):
    made = invite("adam", team, {"role": "viewer"}).json()
    assert client_of("eve").delete(f"/api/workspaces/{team.id}/invitations/{made['id']}").status_code == 403
    assert client_of("adam").delete(f"/api/workspaces/{team.id}/invitations/{made['id']}").status_code == 200
    assert accept(mallory, token_of(made["url"])).status_code == 410
    assert not Membership.objects.filter(workspace=team, user=mallory).exists()
