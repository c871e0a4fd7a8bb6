"""Who may call the API: a Bearer token, or a logged-in browser that sends its CSRF token."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client
from django.utils.crypto import get_random_string

from analyst.models import AnalysisSession, ApiToken

SESSIONS = "/api/sessions"


def assert_unauthorized(response) -> None:
    assert response.status_code == 401
    assert response["Content-Type"] == "application/json"
    error = response.json()["error"]
    assert error["code"] == "unauthorized"
    assert error["message"]


@pytest.mark.django_db
def test_no_credentials_is_401_json():
    assert_unauthorized(Client().get(SESSIONS))
    assert_unauthorized(Client().post(SESSIONS, {}, "application/json"))
    assert not AnalysisSession.objects.exists()


@pytest.mark.django_db
def test_no_credentials_is_401_before_any_lookup_of_the_session(session):
    assert_unauthorized(Client().get(f"/api/sessions/{session.id}/events"))


@pytest.mark.parametrize(
    "header",
    [
        "Bearer ada_not-a-real-token",
        "Bearer ",
        "Basic YWxpY2U6cHc=",
        "bearer {secret}",  # the scheme is matched exactly
        "{secret}",  # no scheme at all
    ],
)
def test_a_wrong_token_is_401(alice, header):
    _, secret = ApiToken.issue(alice)
    response = Client(HTTP_AUTHORIZATION=header.format(secret=secret)).get(SESSIONS)
    assert_unauthorized(response)


def test_a_revoked_token_is_401(alice):
    token, secret = ApiToken.issue(alice)
    client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert client.get(SESSIONS).status_code == 200
    token.delete()
    assert_unauthorized(client.get(SESSIONS))


def test_a_token_of_a_deactivated_user_is_401(alice):
    _, secret = ApiToken.issue(alice)
    alice.is_active = False
    alice.save()
    assert_unauthorized(Client(HTTP_AUTHORIZATION=f"Bearer {secret}").get(SESSIONS))


def test_a_valid_bearer_token_works_and_is_marked_used(alice):
    token, secret = ApiToken.issue(alice)
    assert token.last_used_at is None
    response = Client(HTTP_AUTHORIZATION=f"Bearer {secret}").get(SESSIONS)
    assert response.status_code == 200
    assert response.json() == {"sessions": []}
    token.refresh_from_db()
    assert token.last_used_at is not None


def test_a_bearer_token_needs_no_csrf_token(alice):
    _, secret = ApiToken.issue(alice)
    client = Client(enforce_csrf_checks=True, HTTP_AUTHORIZATION=f"Bearer {secret}")
    response = client.post(SESSIONS, {"title": "scripted"}, "application/json")
    assert response.status_code == 201
    assert AnalysisSession.objects.get().owner == alice


def test_a_wrong_token_is_refused_even_for_a_logged_in_browser(alice):
    client = Client()
    client.force_login(alice)
    assert_unauthorized(client.get(SESSIONS, HTTP_AUTHORIZATION="Bearer ada_wrong"))


def test_a_logged_in_browser_may_get(alice):
    AnalysisSession.objects.create(owner=alice, model="anthropic/claude-test", title="mine")
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    response = client.get(SESSIONS)
    assert response.status_code == 200
    assert [s["title"] for s in response.json()["sessions"]] == ["mine"]


def test_a_logged_in_browser_may_not_post_without_the_csrf_token(alice):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    response = client.post(SESSIONS, {"title": "forged"}, "application/json")
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "csrf_failed"
    assert not AnalysisSession.objects.exists()


def test_a_logged_in_browser_may_not_post_with_a_wrong_csrf_token(alice):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    client.cookies[settings.CSRF_COOKIE_NAME] = get_random_string(32)
    response = client.post(
        SESSIONS, {"title": "forged"}, "application/json", HTTP_X_CSRFTOKEN=get_random_string(32)
    )
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "csrf_failed"
    assert not AnalysisSession.objects.exists()


def test_a_logged_in_browser_may_post_with_the_csrf_token(alice):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    secret = get_random_string(32)
    client.cookies[settings.CSRF_COOKIE_NAME] = secret
    response = client.post(
        SESSIONS, {"title": "from the browser"}, "application/json", HTTP_X_CSRFTOKEN=secret
    )
    assert response.status_code == 201
    created = AnalysisSession.objects.get()
    assert (created.owner, created.title) == (alice, "from the browser")
