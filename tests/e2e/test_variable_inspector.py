"""The variables panel: a code cell's DataFrame listed with its type, shape and memory, the list
refreshed after the next cell, and a click that shows the table's first rows; at 390 px too."""

from __future__ import annotations

import re

FRAME = (
    "import pandas as pd\n"
    'df = pd.DataFrame({"a": range(3376), "b": [i / 2 for i in range(3376)], "c": ["x"] * 3376,\n'
    '                   "d": 1, "e": True, "f": "<b>y</b>", "g": [None] * 3376})'
)


def run_cell(page, code: str, index: int) -> None:
    from playwright.sync_api import expect

    composer = page.get_by_test_id("composer-input")
    composer.fill(code)
    composer.press("Control+Enter")
    cell = page.get_by_test_id("code-cell").nth(index)
    expect(cell).to_have_attribute("data-state", "done", timeout=60_000)
    expect(page.get_by_test_id("running-status")).to_be_hidden(timeout=60_000)


def test_the_inspector_lists_refreshes_and_previews(stack, web, alice_login, shoot):
    from playwright.sync_api import expect

    page = alice_login()
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    page.get_by_test_id("variables-toggle").click()
    panel = page.get_by_test_id("variables-panel")
    expect(panel.get_by_test_id("variables-message")).to_contain_text("starts on first use")
    page.get_by_test_id("mode-toggle").click()
    run_cell(page, FRAME, 0)

    rows = panel.get_by_test_id("variable")
    expect(rows).to_have_count(1, timeout=30_000)
    expect(rows.first).to_contain_text("df")
    expect(rows.first.locator(".variable-type")).to_have_text("DataFrame")
    expect(rows.first.locator(".variable-shape")).to_have_text("3,376 × 7")
    expect(rows.first.locator(".variable-size")).to_have_text(re.compile(r"^\d+(\.\d)? (KiB|MiB)$"))
    expect(page.get_by_test_id("kernel-state-word")).to_have_text("Idle")
    expect(page.get_by_test_id("kernel-memory")).to_have_text(re.compile(r"MiB / \d+(\.\d)? GiB"))

    run_cell(page, "total = int(df.a.sum())\nnames = list(df.columns)", 1)
    expect(rows).to_have_count(3, timeout=30_000)
    expect(panel.locator('[data-name="names"] .variable-shape')).to_have_text("7")
    expect(panel.locator('[data-name="total"] .variable-type')).to_have_text("int")

    panel.get_by_role("button", name="df").click()
    preview = panel.get_by_test_id("variable-preview")
    expect(preview).to_contain_text("First 50 of 3,376 rows", timeout=30_000)
    # In the interactive table, as a cell's DataFrame is.
    table = preview.get_by_test_id("data-table")
    expect(table).to_have_attribute("data-state", "grid", timeout=30_000)
    titles = table.locator(".tabulator-col-title")
    expect(titles.filter(has_text=re.compile(r"^g$"))).to_have_count(1)
    expect(table.locator(".tabulator-row")).to_have_count(10)  # its first page of the 50 rows
    expect(table.locator(".tabulator-row").nth(3)).to_contain_text("<b>y</b>")  # shown as text, not markup
    assert table.locator(".tabulator-row b").count() == 0
    shoot(page, "preview")

    page.set_viewport_size({"width": 390, "height": 844})
    box = panel.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
    shoot(page, "phone")
