"""Names a person can tell apart: a new session takes its first question's words as its title,
shown at once in the header, the tab and the sidebar (whole on hover where the sidebar cuts it);
a branch is named after its edited question; the sessions page finds a session by a word of its
title. On a desktop and on a phone."""

from __future__ import annotations

import re

import pytest

from tests.fakes.model_server import anthropic_text

LONG = "Which of the US airports had the worst departure delays in the winter months of 2023?"


@pytest.mark.parametrize("width", [1280, 390], ids=["desktop", "phone"])
def test_a_session_and_its_branch_are_named_after_their_questions(stack, web, alice_login, shoot, width):
    from playwright.sync_api import expect

    stack.script(anthropic_text("Chicago, mostly."), anthropic_text("Denver, mostly."))
    page = alice_login()
    page.set_viewport_size({"width": width, "height": 844})
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    original_url = page.url
    header = page.get_by_test_id("session-title")
    expect(header).to_have_text("Untitled analysis")

    composer = page.get_by_test_id("composer-input")
    composer.fill(LONG)
    composer.press("Enter")
    expect(header).to_have_text(re.compile(r"^Which of the US airports .*…$"))
    title = header.text_content()
    assert len(title) <= 60 and LONG.startswith(title.removesuffix("…")) and page.title().startswith(title)
    expect(page.get_by_test_id("assistant-message").last).to_contain_text("Chicago", timeout=90_000)
    expect(page.get_by_test_id("running-status")).to_be_hidden(timeout=60_000)
    page.reload()  # the name is stored, not only shown
    expect(header).to_have_text(title)
    expect(header).to_have_attribute("title", title)
    if width > 800:  # a phone's sidebar keeps only its heading
        current = page.locator('.session-nav a[aria-current="page"]')
        expect(current).to_have_text(title)
        expect(current).to_have_attribute("title", title)
        assert current.evaluate("a => a.scrollWidth > a.clientWidth"), "the sidebar cuts it: hover shows it"
    shoot(page, f"named-{width}")

    page.get_by_test_id("user-message").first.get_by_test_id("question-edit").click()
    composer.fill("And <i>Denver</i>?")
    composer.press("Enter")
    page.wait_for_url(lambda url: url != original_url and re.search(r"/sessions/[0-9a-f-]{36}/$", url))
    expect(header).to_have_text("And Denver?")
    expect(page.get_by_test_id("assistant-message").last).to_contain_text("Denver", timeout=90_000)
    expect(page.get_by_test_id("running-status")).to_be_hidden(timeout=60_000)

    page.goto(original_url)
    expect(page.get_by_test_id("branch-link")).to_have_text("branched: And Denver?")

    page.goto(f"{web}/sessions/")
    search = page.get_by_test_id("session-search-input")
    search.fill("denver")
    search.press("Enter")
    rows = page.get_by_test_id("session-row")
    expect(rows).to_have_count(1)
    expect(rows.first.get_by_role("link").first).to_have_text("And Denver?")
    assert page.evaluate("document.documentElement.scrollWidth") <= width, "no sideways scrolling"
    shoot(page, f"search-{width}")
    search = page.get_by_test_id("session-search-input")
    search.fill("nowhere")
    search.press("Enter")
    expect(page.get_by_test_id("session-search-empty")).to_contain_text("“nowhere”")
    page.get_by_test_id("session-search-clear").click()
    expect(page.get_by_test_id("session-row")).to_have_count(2)
