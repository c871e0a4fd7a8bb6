"""Single sign-on in Chromium: the login page's "Sign in with" button, the real test provider's
login page, and back to the app signed in, with the role the provider's group gives."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.conf import settings

from tests.integration.conftest import database_url
from tests.oidc_provider.process import OIDCProvider
from tests.web_process import web_server


@pytest.fixture(scope="module")
def sso_web(django_db_setup: None, oidc_provider: OIDCProvider) -> Iterator[str]:
    """A web server (no worker or sandboxd: nothing here runs code) signing in at the provider."""
    env = {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "e2e-tests",
        "DATABASE_URL": database_url(),
        "REDIS_URL": settings.REDIS_URL,
        **oidc_provider.app_settings(),
        "ANALYST_OIDC_NAME": "Acme ID",
        "ANALYST_OIDC_GROUP_ROLES": "analysts=Data team:editor",
    }
    with web_server(env, name="oidc") as url:
        yield url


def test_sign_in_with_the_provider(transactional_db, sso_web, oidc_provider, browser, shoot):
    from django.contrib.auth import get_user_model
    from playwright.sync_api import expect

    from analyst.models.workspaces import Membership

    oidc_provider.set_user("grace", email="grace@example.com", groups=["analysts"])
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(f"{sso_web}/accounts/login/")
        shoot(page, "login")
        page.get_by_role("link", name="Sign in with Acme ID").click()

        page.wait_for_url(f"http://127.0.0.1:{oidc_provider.port}/accounts/login/**")
        page.fill("input[name=username]", "grace")
        page.fill("input[name=password]", oidc_provider.password)
        page.click("form[data-testid=provider-login] button[type=submit]")

        page.wait_for_url(f"{sso_web}/sessions/")
        expect(page.locator(".who")).to_have_text("grace")
        shoot(page, "signed-in")
    finally:
        context.close()

    grace = get_user_model().objects.get(username="grace")
    assert Membership.objects.get(user=grace, workspace__name="Data team").role == "editor"
