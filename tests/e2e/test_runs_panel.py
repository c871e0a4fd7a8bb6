"""The Runs drawer: a cell marked as the parameters cell (by its toggle, or in the drawer) lists
its parameters with their types and defaults, Run with other values runs the analysis (the run
listed, done, its session holding the new output), and a schedule is added, paused and deleted;
at 390 px too."""

from __future__ import annotations

import re

from tests.e2e.test_variable_inspector import run_cell

PARAMETERS = "threshold = 5\nlabel = 'small'"
USES_THEM = "print(label, sum(x for x in range(20) if x > threshold))"


def test_parameters_a_run_and_a_schedule_from_the_page(stack, web, alice_login, shoot):
    from playwright.sync_api import expect

    page = alice_login()
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    page.get_by_test_id("mode-toggle").click()
    run_cell(page, PARAMETERS, 0)
    run_cell(page, USES_THEM, 1)

    # The cell of assignments has a Parameters toggle; the cell that prints has none.
    toggles = page.get_by_test_id("cell-parameters")
    expect(toggles).to_have_count(1)
    toggles.click()
    expect(toggles).to_have_attribute("aria-pressed", "true")
    page.get_by_test_id("runs-toggle").click()
    panel = page.get_by_test_id("runs-panel")
    choice = panel.get_by_test_id("parameters-cell")
    expect(choice.locator("option")).to_have_count(2)  # none, and the one cell of assignments
    expect(choice).to_have_value(PARAMETERS)
    choice.select_option("")  # unmarked from the drawer: the cell's toggle follows
    expect(toggles).to_have_attribute("aria-pressed", "false")
    choice.select_option(PARAMETERS)
    expect(toggles).to_have_attribute("aria-pressed", "true")
    rows = panel.get_by_test_id("parameter")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("threshold")
    expect(rows.nth(0).locator(".parameter-type")).to_have_text("int")
    expect(rows.nth(1).locator(".parameter-default")).to_have_text('"small"')

    form = panel.get_by_test_id("run-form")
    form.locator("input[name=threshold]").fill("15")
    form.locator("input[name=label]").fill("large")
    form.get_by_test_id("run-start").click()
    run = panel.get_by_test_id("run")
    expect(run).to_have_count(1)
    expect(run.get_by_test_id("run-status")).to_have_text("done", timeout=90_000)
    expect(run).to_contain_text('{"threshold":15,"label":"large"}')
    shoot(page, "runs-panel")

    form.locator("input[name=threshold]").fill("many")
    form.get_by_test_id("run-start").click()
    expect(panel.get_by_test_id("runs-message")).to_contain_text("threshold must be of type int")
    expect(run).to_have_count(1)

    schedule_form = panel.get_by_test_id("schedule-form")
    schedule_form.locator("input[name=cron]").fill("0 7 * * MON")
    schedule_form.locator("input[name=timezone]").fill("Europe/Paris")
    schedule_form.get_by_test_id("schedule-add").click()
    schedule = panel.get_by_test_id("schedule")
    expect(schedule).to_have_count(1)
    expect(schedule).to_contain_text("0 7 * * MON (Europe/Paris)")
    expect(schedule.get_by_test_id("schedule-next")).to_contain_text("next")
    expect(panel.get_by_test_id("runs-message")).to_contain_text("signing secret")
    schedule.get_by_test_id("schedule-pause").click()
    expect(schedule.get_by_test_id("schedule-next")).to_contain_text("paused")
    schedule.get_by_role("button", name="Delete").click()
    expect(schedule).to_have_count(0)

    run.get_by_role("link").click()  # the run's own session: the new values' output
    expect(page.get_by_test_id("transcript")).to_contain_text("large 70", timeout=30_000)

    page.set_viewport_size({"width": 390, "height": 844})
    page.go_back()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, width
