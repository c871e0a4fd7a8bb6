"""The browser's pages: accounts, my sessions, a session page, share links and forks from them."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from django.test import Client

from analyst.models import AnalysisSession, Artifact, DataFile, KernelSnapshot, ShareLink

pytestmark = pytest.mark.django_db


def app_attributes(html: str) -> dict[str, str]:
    root = re.search(r'<main id="app"([^>]*)>', html)
    assert root, "the page has no #app root"
    return dict(re.findall(r'data-([a-z-]+)="([^"]*)"', root.group(1)))


def test_sign_up_then_log_in_lands_on_my_sessions():
    client = Client(enforce_csrf_checks=True)
    page = client.get("/accounts/signup/")
    token = page.cookies["csrftoken"].value
    response = client.post(
        "/accounts/signup/",
        {
            "username": "bob",
            "password1": "a-long-passphrase",
            "password2": "a-long-passphrase",
            "csrfmiddlewaretoken": token,
        },
    )
    # The same answer whether or not the name was free (it must not tell): log in with it now.
    assert response.status_code == 200 and 'name="username" value="bob"' in response.content.decode()
    login = client.post(
        "/accounts/login/",
        {"username": "bob", "password": "a-long-passphrase", "signed_up": "1", "csrfmiddlewaretoken": token},
    )
    assert login.status_code == 302 and login["Location"] == "/sessions/"
    assert "My sessions" in client.get("/sessions/").content.decode()


def test_forms_refuse_a_post_without_csrf(alice):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    assert client.post("/sessions/new", {"title": "x"}).status_code == 403
    assert not AnalysisSession.objects.filter(owner=alice).exists()


def test_pages_need_a_login():
    assert Client().get("/sessions/")["Location"].startswith("/accounts/login/")
    assert Client().get("/")["Location"] == "/accounts/login/"


def test_new_rename_list_and_delete(browser, alice, settings, tmp_path, django_capture_on_commit_callbacks):
    settings.MEDIA_ROOT = tmp_path
    response = browser.post("/sessions/new", {"title": "Q3 revenue", "model": "openai/gpt-test"})
    session = AnalysisSession.objects.get(owner=alice)
    assert response["Location"] == f"/sessions/{session.id}/" and session.model == "openai/gpt-test"
    browser.post(f"/sessions/{session.id}/rename", {"title": "Q3 revenue, by region", "next": "list"})
    data_file = DataFile(session=session, name="q3.csv", path="data/q3.csv", size=4)
    data_file.stored.save("q3.csv", ContentFile(b"a\n1\n"))
    artifact = Artifact(session=session, mime_type="image/png", size=3)
    artifact.file.save("chart.png", ContentFile(b"png"))
    listing = browser.get("/sessions/").content.decode()
    assert "Q3 revenue, by region" in listing and "q3.csv" in listing

    stored = [data_file.stored.path, artifact.file.path]
    with django_capture_on_commit_callbacks(execute=True):  # stored files go once the rows have
        assert browser.post(f"/sessions/{session.id}/delete")["Location"] == "/sessions/"
    assert not AnalysisSession.objects.filter(id=session.id).exists()
    assert not any(__import__("os").path.exists(path) for path in stored), "its files were left behind"


def test_another_users_session_page_is_a_404(session):
    mallory = get_user_model().objects.create_user("mallory")
    client = Client()
    client.force_login(mallory)
    assert client.get(f"/sessions/{session.id}/").status_code == 404
    assert client.post(f"/sessions/{session.id}/delete").status_code == 404
    assert client.post(f"/sessions/{session.id}/share").status_code == 404
    assert AnalysisSession.objects.filter(id=session.id).exists()


def test_session_page_carries_what_the_app_needs(browser, session, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    attributes = app_attributes(browser.get(f"/sessions/{session.id}/").content.decode())
    assert attributes["mode"] == "owner"
    assert attributes["ws-url"] == f"/ws/sessions/{session.id}/"
    assert attributes["api-base"] == f"/api/sessions/{session.id}"
    # Why the model cannot answer here: Send is off with this reason, code cells still work.
    assert "set ANTHROPIC_API_KEY" in attributes["model-unavailable"]
    assert len(attributes["csrf-token"]) >= 32
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    again = app_attributes(browser.get(f"/sessions/{session.id}/").content.decode())
    assert again["model-unavailable"] == ""


def test_the_page_escapes_a_hostile_title(browser, session):
    session.title = '"><script>alert(1)</script>'
    session.save()
    html = browser.get(f"/sessions/{session.id}/").content.decode()
    assert "<script>alert(1)</script>" not in html
    assert app_attributes(html)["title"] == "&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"


def test_share_link_read_only_and_revocable(browser, session):
    browser.post(f"/sessions/{session.id}/share")
    link = ShareLink.objects.get(session=session)
    assert len(link.token) >= 43  # 256 random bits
    assert link.token in browser.get(f"/sessions/{session.id}/").content.decode()

    anyone = Client()
    page = anyone.get(f"/s/{link.token}/")
    attributes = app_attributes(page.content.decode())
    assert attributes["mode"] == "shared" and "csrf-token" not in attributes and "api-base" not in attributes
    assert attributes["files-url"] == ""  # downloads were not allowed
    assert anyone.get(f"/api/shared/{link.token}/events").json()["events"][0]["type"] == "user_message"
    assert anyone.get(f"/api/shared/{link.token}/files").status_code == 404
    assert anyone.post(f"/api/sessions/{session.id}/messages", {"content": "hi"}).status_code == 401
    assert anyone.post(f"/api/shared/{link.token}/events").status_code == 405

    browser.post(f"/sessions/{session.id}/share/{link.id}/revoke")
    assert anyone.get(f"/s/{link.token}/").status_code == 404
    assert anyone.get(f"/api/shared/{link.token}/events").status_code == 404
    assert anyone.get("/s/not-a-token/").status_code == 404


def test_a_shared_link_reaches_only_its_own_sessions_artifacts(browser, session, alice, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    other = AnalysisSession.objects.create(owner=alice, model="anthropic/claude-test")
    mine = Artifact(session=session, mime_type="image/png", size=3)
    mine.file.save("a.png", ContentFile(b"png"))
    theirs = Artifact(session=other, mime_type="image/png", size=3)
    theirs.file.save("b.png", ContentFile(b"png"))
    link = ShareLink.objects.create(session=session)
    anyone = Client()
    assert anyone.get(f"/api/shared/{link.token}/artifacts/{theirs.id}").status_code == 404
    assert anyone.get(f"/api/artifacts/{mine.id}").status_code == 401
    ok = anyone.get(f"/api/shared/{link.token}/artifacts/{mine.id}")
    assert ok.status_code == 200 and b"".join(ok.streaming_content) == b"png"
    ok.close()  # last: closing a response ends the request, and with it the test's connection


def test_fork_from_a_share_link_needs_a_login_and_copies_the_session(session, alice, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    taken = KernelSnapshot.objects.create(session=session, snapshot_id="a" * 32, size=10)
    link = ShareLink.objects.create(session=session, allow_fork_state=True)
    assert Client().post(f"/s/{link.token}/fork")["Location"].startswith("/accounts/login/")

    bob = get_user_model().objects.create_user("bob")
    client = Client()
    client.force_login(bob)
    response = client.post(f"/s/{link.token}/fork")
    fork = AnalysisSession.objects.get(owner=bob)
    assert response["Location"] == f"/sessions/{fork.id}/"
    log = client.get(f"/api/sessions/{fork.id}/events").json()["events"]
    assert [e["type"] for e in log] == ["user_message", "forked", "notice"]
    assert log[-2]["payload"]["kernel_state"] is True
    shared = KernelSnapshot.objects.get(session=fork)
    assert shared.snapshot_id == "a" * 32
    assert shared.created_at == taken.created_at  # so later uploads reach the restored sandbox
    assert AnalysisSession.objects.filter(owner=alice).count() == 1  # the source is untouched
