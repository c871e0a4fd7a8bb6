"""The kernel's state in the header: busy while a cell runs and idle after, its memory against
its limit; Interrupt stops a long cell with KeyboardInterrupt and the kernel keeps its variables."""

from __future__ import annotations

import re


def test_busy_during_a_long_cell_interrupt_then_idle(stack, web, alice_login, shoot):
    from playwright.sync_api import expect

    page = alice_login()
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    interrupt = page.get_by_test_id("kernel-interrupt")
    expect(interrupt).to_be_hidden()
    page.get_by_test_id("mode-toggle").click()
    composer = page.get_by_test_id("composer-input")
    composer.fill("kept = 7\nimport time\ntime.sleep(60)")
    composer.press("Control+Enter")

    state = page.get_by_test_id("kernel-state")
    expect(state).to_have_attribute("data-state", "busy", timeout=60_000)
    expect(page.get_by_test_id("kernel-state-word")).to_have_text("Busy")
    memory = page.get_by_test_id("kernel-memory")
    expect(memory).to_have_text(re.compile(r"MiB / \d+(\.\d)? GiB"), timeout=15_000)
    expect(interrupt).to_be_visible()
    shoot(page, "busy")
    interrupt.click()

    summary = page.get_by_test_id("code-cell").first.get_by_test_id("error-summary")
    expect(summary).to_have_text(re.compile("^KeyboardInterrupt"), timeout=30_000)
    expect(state).to_have_attribute("data-state", "idle", timeout=60_000)
    expect(page.get_by_test_id("kernel-state-word")).to_have_text("Idle")
    expect(interrupt).to_be_hidden()
    shoot(page, "idle")

    composer.fill("kept * 6")
    composer.press("Control+Enter")
    expect(page.get_by_test_id("code-cell").nth(1)).to_contain_text("42", timeout=60_000)
