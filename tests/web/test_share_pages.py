"""A share link's edges: a link that no longer works (revoked, or never right) shows a page in
the app's own design saying so; signing up or logging in from a share page comes back to it;
the owner's panel has a Copy link button for each link."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.utils import timezone

from analyst.models import ShareLink

pytestmark = pytest.mark.django_db


def test_a_revoked_or_unknown_link_says_so_in_the_apps_design(session):
    link = ShareLink.objects.create(session=session)
    assert Client().get(f"/s/{link.token}/").status_code == 200
    link.revoked_at = timezone.now()
    link.save()
    for path in (f"/s/{link.token}/", "/s/not-a-token/"):
        response = Client().get(path)
        assert response.status_code == 404
        page = response.content.decode()
        assert 'data-testid="not-found"' in page and "This link does not work" in page
        assert 'class="topbar"' in page and "Sales" not in page  # the app's page, nothing of the session
    other = Client().get("/no/such/page/")
    assert other.status_code == 404 and "<h1>Not found</h1>" in other.content.decode()


def test_a_404_says_the_same_to_everyone(browser, session):
    """No account menu, no per-request token: what the page says does not depend on who asks
    or whether the address named something that exists."""
    link = ShareLink.objects.create(session=session, revoked_at=timezone.now())
    mine, unknown = browser.get(f"/s/{link.token}/"), browser.get("/s/never-a-token/")
    assert mine.content == unknown.content == Client().get("/s/other-token/").content
    assert "alice" not in mine.content.decode()


def test_signing_up_from_a_share_page_comes_back_to_it(session, settings):
    settings.ANALYST_SIGNUP = "open"
    link = ShareLink.objects.create(session=session)
    share = f"/s/{link.token}/"
    page = Client().get(share).content.decode()
    assert f'href="/accounts/signup/?next=/s/{link.token}/"' in page.replace("%2F", "/")
    visitor = Client()
    form = visitor.get("/accounts/signup/", {"next": share}).content.decode()
    assert f'name="next" value="{share}"' in form
    assert f'href="/accounts/login/?next=/s/{link.token}/"' in form.replace("%2F", "/")
    password = "a-long-passphrase"
    answer = visitor.post(
        "/accounts/signup/", {"username": "bob", "password1": password, "password2": password, "next": share}
    )
    assert answer.status_code == 200 and f'name="next" value="{share}"' in answer.content.decode()
    login = visitor.post(
        "/accounts/login/", {"username": "bob", "password": password, "next": share, "signed_up": "1"}
    )
    assert login.status_code == 302 and login["Location"] == share
    assert visitor.get(share).status_code == 200


def test_a_next_page_elsewhere_is_ignored(settings):
    settings.ANALYST_SIGNUP = "open"
    password = "a-long-passphrase"
    visitor = Client()
    answer = visitor.post(
        "/accounts/signup/",
        {"username": "carol", "password1": password, "password2": password, "next": "https://evil.example/"},
    )
    assert answer.status_code == 200 and "evil.example" not in answer.content.decode()
    login = visitor.post("/accounts/login/", {"username": "carol", "password": password, "next": ""})
    assert login.status_code == 302 and login["Location"] == "/sessions/"


def test_logging_in_from_a_share_page_comes_back_to_it(session, alice):
    link = ShareLink.objects.create(session=session)
    share = f"/s/{link.token}/"
    login = Client().get("/accounts/login/", {"next": share}).content.decode()
    assert f'name="next" value="{share}"' in login
    assert f'href="/accounts/signup/?next=/s/{link.token}/"' in login.replace("%2F", "/")
    answer = Client().post(
        "/accounts/login/", {"username": "alice", "password": "a-long-passphrase", "next": share}
    )
    assert answer.status_code == 302 and answer["Location"] == share


def test_each_link_in_the_owners_panel_has_a_copy_button(browser, session):
    link = ShareLink.objects.create(session=session)
    page = browser.get(f"/sessions/{session.id}/").content.decode()
    [url] = re.findall(r'data-copy="([^"]+)" data-testid="copy-share-url"', page)
    assert url == f"http://testserver/s/{link.token}/"
    assert f'value="{url}" data-testid="share-url"' in page
