"""API tokens, in Chromium: make one on the tokens page, copy its secret with its Copy button, use
it against the API, revoke it on the page, and the API refuses it."""

from __future__ import annotations

import re

import httpx
import pytest

from tests.e2e.test_reading_a_session import pasted


def test_create_use_and_revoke_a_token(stack, web, alice_login, shoot):
    from playwright.sync_api import expect

    page = alice_login()
    page.get_by_role("link", name="API tokens").click()
    page.wait_for_url(f"{web}/settings/tokens/")
    page.get_by_test_id("token-create-name").fill("e2e script")
    page.get_by_test_id("token-create").click()
    secret = page.get_by_test_id("token-secret").inner_text().strip()
    assert re.fullmatch(r"ada_[A-Za-z0-9_-]{43}", secret)
    expect(page.get_by_test_id("token-row")).to_have_count(1)
    expect(page.get_by_test_id("token-name")).to_have_text("e2e script")
    shoot(page, "created")

    def api_status() -> int:
        headers = {"Authorization": f"Bearer {secret}"}
        return httpx.get(f"{web}/api/sessions", headers=headers, timeout=10).status_code

    assert api_status() == 200
    page.goto(f"{web}/settings/tokens/")
    expect(page.get_by_test_id("token-secret")).to_have_count(0)
    expect(page.get_by_test_id("token-last-used")).to_contain_text("ago")

    page.get_by_test_id("token-revoke-open").click()
    page.get_by_test_id("token-revoke").click()
    expect(page.get_by_test_id("token-row")).to_have_count(0)
    expect(page.locator(".messages")).to_contain_text("“e2e script” was revoked")
    shoot(page, "revoked")
    assert api_status() == 401


@pytest.mark.parametrize("width", [1280, 390])
def test_the_token_shown_once_has_a_copy_button(stack, web, alice_login, shoot, width):
    from playwright.sync_api import expect

    page = alice_login()
    page.set_viewport_size({"width": width, "height": 844})
    page.context.grant_permissions(["clipboard-write"])
    page.goto(f"{web}/settings/tokens/")
    page.get_by_test_id("token-create-name").fill("copied")
    page.get_by_test_id("token-create").click()
    secret = page.get_by_test_id("token-secret").inner_text().strip()
    copy = page.get_by_test_id("copy-token")
    expect(copy).to_be_visible()
    copy.click()
    expect(copy).to_have_text("Copied")
    assert pasted(page) == secret
    shoot(page, "copied")
    assert page.evaluate("document.documentElement.scrollWidth") <= width, "no sideways scrolling"
