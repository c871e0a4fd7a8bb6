"""Restart and run all from the page: a confirmation first, then the kernel restarts and the cells
that made its state run again, each shown as a cell of the replay (the status bar says which),
stopping at the first error."""

from __future__ import annotations

import re


def run(page, code: str, count: int) -> None:
    from playwright.sync_api import expect

    composer = page.get_by_test_id("composer-input")
    composer.fill(code)
    composer.press("Control+Enter")
    cell = page.get_by_test_id("code-cell").nth(count - 1)
    expect(cell).not_to_have_attribute("data-state", "running", timeout=60_000)
    expect(page.get_by_test_id("running-status")).to_be_hidden(timeout=60_000)


def test_run_all_asks_first_then_replays_the_cells_and_stops_at_an_error(stack, web, alice_login, shoot):
    from playwright.sync_api import expect

    page = alice_login()
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    page.get_by_test_id("mode-toggle").click()
    run(page, "import time\ntime.sleep(2)\nx = 20", 1)
    run(page, "missing_name", 2)  # failed: left out of the replay
    run(page, "print('twice x is', x * 2)", 3)
    run(page, "open('once.txt', 'x').close()", 4)  # its file stays: run again, it fails
    run(page, "print('never again')", 5)

    page.get_by_test_id("kernel-run-all").click()
    question = page.get_by_test_id("kernel-run-all-question")
    expect(question).to_contain_text("It stops at the first error")
    question.get_by_role("button", name="Cancel").click()
    expect(question).to_be_hidden()
    page.get_by_test_id("kernel-run-all").click()
    shoot(page, "asking")
    page.get_by_test_id("kernel-run-all-confirm").click()
    expect(page.get_by_test_id("running-status")).to_contain_text("Running cell 1 of 4…", timeout=60_000)

    notices = page.get_by_test_id("notice")
    expect(notices.filter(has_text="Stopped at cell 3 of 4")).to_have_count(1, timeout=90_000)
    expect(page.get_by_test_id("running-status")).to_be_hidden(timeout=60_000)
    replayed = page.get_by_test_id("code-cell").filter(has=page.get_by_test_id("cell-replay"))
    expect(replayed).to_have_count(3)
    expect(replayed.get_by_test_id("cell-replay")).to_have_text(
        ["replay 1 of 4", "replay 2 of 4", "replay 3 of 4"]
    )
    expect(replayed.nth(1).get_by_test_id("cell-output")).to_have_text("twice x is 40")
    expect(replayed.nth(2).get_by_test_id("error-summary")).to_contain_text("FileExistsError")
    expect(notices.filter(has_text="The kernel was restarted")).to_have_count(1)
    shoot(page, "stopped")
