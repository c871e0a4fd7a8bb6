"""On a 390 px phone screen the session page keeps the composer and Send on the screen: on
arrival, and at the end of a long transcript."""

from __future__ import annotations

import re

from tests.fakes.model_server import anthropic_text, anthropic_tool_call

PHONE = {"width": 390, "height": 844}


def on_screen(page, testid: str) -> bool:
    box = page.get_by_test_id(testid).bounding_box()
    return (
        box is not None
        and box["x"] >= 0
        and box["x"] + box["width"] <= PHONE["width"]
        and (box["y"] >= 0 and box["y"] + box["height"] <= PHONE["height"])
    )


def test_the_composer_and_send_stay_on_a_phones_screen(stack, web, alice_login, shoot):
    from playwright.sync_api import expect

    stack.script(
        anthropic_tool_call("run_python", {"code": "for i in range(120):\n    print('row', i)"}),
        anthropic_text("Here are the rows. " * 40),
    )
    page = alice_login()
    page.set_viewport_size(PHONE)
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    composer = page.get_by_test_id("composer-input")
    composer.scroll_into_view_if_needed()
    assert on_screen(page, "composer-input") and on_screen(page, "send"), "on arrival"
    composer.fill("Show me the rows")
    page.get_by_test_id("send").click()
    expect(page.get_by_test_id("assistant-message").last).to_contain_text("Here are the rows", timeout=90_000)
    page.wait_for_timeout(300)  # the page follows the bottom as the answer arrives
    shoot(page, "phone")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], "no sideways scrolling"
    assert on_screen(page, "composer-input") and on_screen(page, "send"), "after a long transcript"
