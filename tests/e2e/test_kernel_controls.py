"""Restart the kernel from the page: a confirmation first, then a fresh kernel, said in the
transcript; Cancel leaves it as it was."""

from __future__ import annotations

import re


def test_restart_asks_first_then_empties_the_kernel(stack, web, alice_login, shoot):
    from playwright.sync_api import expect

    page = alice_login()
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    page.get_by_test_id("mode-toggle").click()
    composer = page.get_by_test_id("composer-input")
    composer.fill("x = 41")
    composer.press("Control+Enter")
    cells = page.get_by_test_id("code-cell")
    expect(cells.first).to_have_attribute("data-state", "done", timeout=60_000)
    expect(page.get_by_test_id("running-status")).to_be_hidden(timeout=60_000)

    restart = page.get_by_test_id("kernel-restart")
    restart.click()
    expect(page.get_by_test_id("kernel-restart-question")).to_contain_text("variables and imports are lost")
    page.get_by_test_id("kernel-restart-question").get_by_role("button", name="Cancel").click()
    expect(page.get_by_test_id("kernel-restart-question")).to_be_hidden()
    restart.click()
    shoot(page, "asking")
    page.get_by_test_id("kernel-restart-confirm").click()
    expect(page.get_by_test_id("notice").last).to_contain_text("The kernel was restarted", timeout=60_000)
    expect(page.get_by_test_id("running-status")).to_be_hidden(timeout=60_000)

    composer.fill("x + 1")
    composer.press("Control+Enter")
    expect(cells.nth(1).get_by_test_id("error-summary")).to_have_text(
        "NameError: name 'x' is not defined", timeout=60_000
    )
    shoot(page, "restarted")
