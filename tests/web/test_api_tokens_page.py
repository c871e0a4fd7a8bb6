"""The API tokens page: make a named token (its secret shown once), see when it was last used,
revoke it; each person sees and revokes only their own."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils.crypto import get_random_string

from analyst.models import ApiToken
from analyst.models.tokens import hash_token

pytestmark = pytest.mark.django_db

PAGE = "/settings/tokens/"
SECRET = re.compile(r'data-testid="token-secret">(ada_[A-Za-z0-9_-]{43})<')


@pytest.fixture
def mallory():
    return get_user_model().objects.create_user("mallory", password="a-long-passphrase")


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def create(client: Client, name: str):
    return client.post(PAGE, {"name": name})


def secret_in(response) -> str:
    found = SECRET.findall(response.content.decode())
    assert len(found) == 1, "the new token's secret is on the page once"
    return found[0]


def api_status(secret: str) -> int:
    return Client(HTTP_AUTHORIZATION=f"Bearer {secret}").get("/api/sessions").status_code


def rows(response) -> list[str]:
    return re.findall(r'<tr data-testid="token-row">(.*?)</tr>', response.content.decode(), re.S)


def test_creating_shows_the_secret_once_and_a_reload_does_not(browser, alice):
    response = create(browser, "  nightly report  ")
    assert response.status_code == 200
    secret = secret_in(response)
    token = ApiToken.objects.get(user=alice)
    assert (token.name, token.digest) == ("nightly report", hash_token(secret))
    assert token.prefix == secret[4:12] and f"ada_{token.prefix}…" in response.content.decode()
    assert "Authorization: Bearer" in response.content.decode() and "http://testserver/mcp" in (
        response.content.decode()
    )
    assert "no-store" in response["Cache-Control"], "no cache may keep the secret"

    again = browser.get(PAGE)
    assert again.status_code == 200
    assert secret not in again.content.decode() and 'data-testid="token-secret"' not in again.content.decode()
    assert secret[:20] not in again.content.decode(), "only the short prefix is ever shown again"
    [row] = rows(again)
    assert "nightly report" in row and f"ada_{token.prefix}…" in row


def test_the_secret_works_against_the_api_and_the_page_shows_it_used(browser):
    secret = secret_in(create(browser, "script"))
    [row] = rows(browser.get(PAGE))
    assert re.search(r'data-testid="token-last-used">never<', row)

    assert api_status(secret) == 200
    [row] = rows(browser.get(PAGE))
    assert not re.search(r'data-testid="token-last-used">never<', row)
    assert re.search(r'data-testid="token-last-used"><time datetime="[^"]+">[^<]* ago</time>', row)


def test_revoking_deletes_the_token_and_the_api_refuses_it(browser, alice):
    kept = secret_in(create(browser, "kept"))
    secret = secret_in(create(browser, "to revoke"))
    assert api_status(secret) == 200
    token = ApiToken.objects.get(user=alice, name="to revoke")

    response = browser.post(f"/settings/tokens/{token.id}/revoke", follow=True)
    assert response.redirect_chain == [(PAGE, 302)]
    assert "“to revoke” was revoked" in response.content.decode()
    assert [re.search(r'token-name">([^<]*)<', r).group(1) for r in rows(response)] == ["kept"]
    assert not ApiToken.objects.filter(id=token.id).exists()
    assert api_status(secret) == 401
    assert api_status(kept) == 200
    assert browser.post(f"/settings/tokens/{token.id}/revoke").status_code == 404, "gone is gone"


def test_revoking_needs_a_post(browser, alice):
    token, _ = ApiToken.issue(alice, name="script")
    assert browser.get(f"/settings/tokens/{token.id}/revoke").status_code == 405
    assert ApiToken.objects.filter(id=token.id).exists()


def test_a_stranger_neither_sees_nor_revokes_my_tokens(browser, alice, mallory):
    secret = secret_in(create(browser, "alice's script"))
    token = ApiToken.objects.get(user=alice)
    ApiToken.issue(mallory, name="mallory's own")
    stranger = logged_in(mallory)

    page = stranger.get(PAGE).content.decode()
    assert "alice&#x27;s script" not in page and token.prefix not in page
    assert [re.search(r'token-name">([^<]*)<', r).group(1) for r in rows(stranger.get(PAGE))] == [
        "mallory&#x27;s own"
    ]
    theirs = stranger.post(f"/settings/tokens/{token.id}/revoke")
    nobodys = stranger.post("/settings/tokens/999999/revoke")
    assert theirs.status_code == nobodys.status_code == 404
    assert theirs.content == nobodys.content, "no hint that the token exists"
    assert ApiToken.objects.filter(id=token.id).exists()
    assert api_status(secret) == 200
    assert [re.search(r'token-name">([^<]*)<', r).group(1) for r in rows(browser.get(PAGE))] == [
        "alice&#x27;s script"
    ]


def test_anonymous_visitors_are_sent_to_log_in(alice):
    token, _ = ApiToken.issue(alice, name="script")
    for response in (
        Client().get(PAGE),
        Client().post(PAGE, {"name": "sneaky"}),
        Client().post(f"/settings/tokens/{token.id}/revoke"),
    ):
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/?next=")
    assert list(ApiToken.objects.values_list("name", flat=True)) == ["script"]


@pytest.mark.parametrize(
    ("name", "error"),
    [
        ("", "Give the token a name"),
        ("   \t ", "Give the token a name"),
        ("x" * 101, "The name is 101 characters long; at most 100 are allowed."),
    ],
)
def test_a_name_must_be_given_and_short(browser, name, error):
    response = create(browser, name)
    assert response.status_code == 400
    assert re.search(r'data-testid="token-error">[^<]*' + re.escape(error), response.content.decode())
    assert 'data-testid="token-secret"' not in response.content.decode()
    assert not ApiToken.objects.exists()


def test_a_missing_name_field_is_refused_too(browser):
    assert browser.post(PAGE, {}).status_code == 400
    assert not ApiToken.objects.exists()


def test_a_name_of_100_characters_is_kept_whole_and_escaped(browser, alice):
    name = "<b>" + "é" * 97
    response = create(browser, f" {name} ")
    assert response.status_code == 200
    assert ApiToken.objects.get(user=alice).name == name
    assert "&lt;b&gt;" in response.content.decode() and "<b>é" not in response.content.decode()


def test_posts_need_the_csrf_token(alice):
    token, secret = ApiToken.issue(alice, name="script")
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    assert client.post(PAGE, {"name": "forged"}).status_code == 403
    assert client.post(f"/settings/tokens/{token.id}/revoke").status_code == 403
    assert list(ApiToken.objects.values_list("name", flat=True)) == ["script"]
    assert api_status(secret) == 200

    csrf = get_random_string(32)
    client.cookies[settings.CSRF_COOKIE_NAME] = csrf
    assert client.post(PAGE, {"name": "real", "csrfmiddlewaretoken": csrf}).status_code == 200
    assert (
        client.post(f"/settings/tokens/{token.id}/revoke", {"csrfmiddlewaretoken": csrf}).status_code == 302
    )
    assert list(ApiToken.objects.values_list("name", flat=True)) == ["real"]


def test_at_most_50_tokens_each(browser, alice, mallory):
    for n in range(49):
        ApiToken.issue(alice, name=f"script {n}")
    assert create(browser, "the fiftieth").status_code == 200
    refused = create(browser, "one too many")
    assert refused.status_code == 400
    assert "You already have 50 tokens, the most allowed; revoke one first." in refused.content.decode()
    assert 'data-testid="token-secret"' not in refused.content.decode()
    assert ApiToken.objects.filter(user=alice).count() == 50
    assert len(rows(refused)) == 50

    assert create(logged_in(mallory), "mallory's first").status_code == 200, "the cap is per person"
    browser.post(f"/settings/tokens/{ApiToken.objects.filter(user=alice).first().id}/revoke")
    assert create(browser, "one too many").status_code == 200, "revoking one makes room"


def test_the_header_links_to_the_page_when_logged_in(browser):
    assert '<a href="/settings/tokens/">API tokens</a>' in browser.get("/sessions/").content.decode()
    assert "API tokens" not in Client().get("/accounts/login/").content.decode()
