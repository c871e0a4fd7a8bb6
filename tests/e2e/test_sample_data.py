"""A new user without a file of their own: sign up, try the sample data set, find it read in the
sandbox and its question in the composer, send it, and get the answer; the sidebar lists the
session."""

from __future__ import annotations

import re

from analyst.models import AnalysisSession
from tests.fakes.model_server import anthropic_text

LONG = 90_000  # ms: the first placement of a session also starts its sandbox


def test_a_new_user_tries_the_sample_and_asks_its_question(stack, web, browser, shoot):
    from playwright.sync_api import expect

    stack.script(anthropic_text("Unemployment rises when growth falls."))
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(f"{web}/accounts/signup/")
    page.fill("input[name=username]", "nora")
    page.fill("input[name=password1]", "a-long-passphrase")
    page.fill("input[name=password2]", "a-long-passphrase")
    page.click("form[data-testid=signup-form] button[type=submit]")
    # The signup answers alike for a free name and a taken one: log in with it now.
    page.fill("form[data-testid=login-form] input[name=password]", "a-long-passphrase")
    page.click("form[data-testid=login-form] button[type=submit]")
    page.wait_for_url(f"{web}/sessions/")
    expect(page.get_by_test_id("sample-form")).to_contain_text("US economy, 1959–2009")
    shoot(page, "offered")

    page.get_by_test_id("try-sample").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/\?try=us-macro$"))
    session = AnalysisSession.objects.get(owner__username="nora")
    expect(page.get_by_test_id("file-added")).to_contain_text("203 rows × 14 columns", timeout=LONG)
    composer = page.get_by_test_id("composer-input")
    expect(composer).to_have_value(re.compile(r"^How did real GDP growth and unemployment move together\?"))
    nav = page.get_by_test_id("session-nav")
    expect(nav.locator("a[aria-current=page]")).to_have_text(session.title)
    shoot(page, "ready")

    composer.press("Enter")
    expect(page.get_by_test_id("assistant-message")).to_contain_text("growth falls", timeout=LONG)
    question = stack.requests[0].json["messages"][0]["content"]
    assert "real GDP growth and unemployment" in str(question)
    assert "data/us_macro_quarterly.csv" in stack.requests[0].json["system"]
    context.close()
