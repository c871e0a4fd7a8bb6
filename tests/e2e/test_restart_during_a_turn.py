"""Restart from the page while a cell runs, one that ignores interrupts: the button stays enabled,
the running turn is stopped and the kernel starts anew within seconds, said in the transcript."""

from __future__ import annotations

import re

STUBBORN = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nx = 41\nwhile True: pass"


def test_restart_ends_a_running_cell_that_ignores_interrupts(stack, web, alice_login, shoot):
    from playwright.sync_api import expect

    page = alice_login()
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    page.get_by_test_id("mode-toggle").click()
    composer = page.get_by_test_id("composer-input")
    composer.fill(STUBBORN)
    composer.press("Control+Enter")
    expect(page.get_by_test_id("kernel-state")).to_have_attribute("data-state", "busy", timeout=60_000)

    # The old page disabled Restart while a turn ran: the cell ran to its 120 s timeout.
    restart = page.get_by_test_id("kernel-restart")
    expect(restart).to_be_enabled()
    expect(page.get_by_test_id("kernel-run-all")).to_be_disabled()
    restart.click()
    expect(page.get_by_test_id("kernel-restart-question")).to_contain_text("a running turn is stopped")
    page.get_by_test_id("kernel-restart-confirm").click()
    cells = page.get_by_test_id("code-cell")
    expect(cells.first.get_by_test_id("error-summary")).to_contain_text("KernelRestarted", timeout=60_000)
    expect(page.get_by_test_id("notice").last).to_contain_text("The kernel was restarted", timeout=60_000)
    expect(page.get_by_test_id("running-status")).to_be_hidden(timeout=60_000)
    shoot(page, "restarted")

    composer.fill("x + 1")
    composer.press("Control+Enter")
    expect(cells.nth(1).get_by_test_id("error-summary")).to_have_text(
        "NameError: name 'x' is not defined", timeout=60_000
    )
