"""Restart and run all from the page: a confirmation first, then the kernel restarts and the
session's analysis (every cell that succeeded, from its start or its last Run all; a Restart does
not shorten it) runs again, each shown as a cell of the replay (the status bar says which),
stopping at the first error."""

from __future__ import annotations

import re

import pytest


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


def press(page, testid: str) -> None:
    """Click a header control, through the header's menu where a narrow screen keeps it there."""
    control = page.get_by_test_id(testid)
    menu = page.get_by_test_id("header-menu")
    if not control.is_visible() and menu.count() and menu.is_visible():
        menu.click()
    control.click()


@pytest.mark.parametrize("width", [1280, 390], ids=["desktop", "phone"])
def test_run_all_right_after_a_restart_runs_the_sessions_analysis(stack, web, alice_login, shoot, width):
    """A Restart empties the kernel, not the analysis: Run all then runs every cell that had
    succeeded, from the session's start, and the state comes back."""
    from playwright.sync_api import expect

    page = alice_login()
    page.set_viewport_size({"width": width, "height": 844})
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    page.get_by_test_id("mode-toggle").click()
    run(page, "x = 20", 1)
    run(page, "missing_name", 2)  # failed: not part of the analysis
    run(page, "print('twice x is', x * 2)", 3)

    press(page, "kernel-restart")
    page.get_by_test_id("kernel-restart-confirm").click()
    notices = page.get_by_test_id("notice")
    expect(notices.filter(has_text="The kernel was restarted")).to_have_count(1, timeout=60_000)
    expect(page.get_by_test_id("running-status")).to_be_hidden(timeout=60_000)

    press(page, "kernel-run-all")
    page.get_by_test_id("kernel-run-all-confirm").click()
    expect(notices.filter(has_text="All 2 cells ran.")).to_have_count(1, timeout=90_000)
    expect(page.get_by_test_id("running-status")).to_be_hidden(timeout=60_000)
    replayed = page.get_by_test_id("code-cell").filter(has=page.get_by_test_id("cell-replay"))
    expect(replayed.get_by_test_id("cell-replay")).to_have_text(["replay 1 of 2", "replay 2 of 2"])
    expect(replayed.nth(1).get_by_test_id("cell-output")).to_have_text("twice x is 40")
    expect(page.get_by_text("no cell has run successfully")).to_have_count(0)
    assert page.evaluate("document.documentElement.scrollWidth") <= width, "no sideways scrolling"
    shoot(page, f"replayed-{width}")
