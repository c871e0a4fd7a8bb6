"""Single sign-on against the real test provider: its settings for the app, and a sign-in that goes
from the app (Django's test client) through the provider's login page (httpx) and back."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urljoin

import httpx
import pytest
from django.http import HttpResponse
from django.test import Client

from tests.oidc_provider.process import OIDCProvider

GROUP_ROLES = [("analysts", "Data team", "editor"), ("leads", "Data team", "admin")]
CALLBACK = "http://testserver/oidc/callback/"


@pytest.fixture
def provider(settings: Any, oidc_provider: OIDCProvider, db: None) -> OIDCProvider:
    for name, value in oidc_provider.app_settings().items():
        setattr(settings, name, value)
    settings.ANALYST_OIDC_NAME = "Acme ID"
    settings.ANALYST_OIDC_GROUP_ROLES = GROUP_ROLES
    return oidc_provider


def through_provider(authorize_url: str, *, username: str, password: str) -> str | None:
    """Sign in at the provider as a browser would; the URL it sends the browser back to (the app's
    callback, with code and state), or None when its login page refuses."""
    with httpx.Client(timeout=10) as http:
        page = http.get(authorize_url)
        assert page.status_code == 302, page.text
        login_url = urljoin(authorize_url, page.headers["location"])
        form = http.get(login_url)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text)
        assert token, form.text
        answer = http.post(
            login_url,
            data={"username": username, "password": password, "csrfmiddlewaretoken": token[1],
                  "next": httpx.URL(login_url).params.get("next", "")},
        )  # fmt: skip
        if answer.status_code != 302:
            return None
        authorized = http.get(urljoin(login_url, answer.headers["location"]))
        assert authorized.status_code == 302, authorized.text
        return authorized.headers["location"]


SignIn = Callable[..., HttpResponse]


@pytest.fixture
def sign_in(provider: OIDCProvider) -> SignIn:
    """sign_in(client, "ada"): the app's answer to the callback after ada signed in at the provider.
    ``tamper`` changes the authorization URL, ``tamper_callback`` the callback's."""

    def run(
        client: Client,
        username: str,
        *,
        tamper: Callable[[str], str] = str,
        tamper_callback: Callable[[str], str] = str,
        next_url: str = "",
    ) -> HttpResponse:
        start = client.get("/oidc/authenticate/" + (f"?next={next_url}" if next_url else ""))
        assert start.status_code == 302, start.content
        back = through_provider(tamper(start["Location"]), username=username, password=provider.password)
        assert back is not None, f"the provider refused {username}'s login"
        assert back.startswith(CALLBACK), back
        return client.get(tamper_callback(back).removeprefix("http://testserver"))

    return run
