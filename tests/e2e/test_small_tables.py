"""A table of one page (five rows) is a grid with no pager, on a desktop and on a phone, and its
Download CSV is named after the variable that holds it; a longer one still pages."""

from __future__ import annotations

import csv
import io
import re

import pytest

WIDTHS = [
    pytest.param({"width": 1280, "height": 900}, id="desktop"),
    pytest.param({"width": 390, "height": 844}, id="phone"),
]
CELL = (
    "import pandas as pd\nsales = pd.DataFrame({'region': list('NESWC'), 'amount': [5, 3, 8, 1, 2]})\nsales"
)
LONGER = "longer = pd.DataFrame({'n': range(25)})\nlonger"


def run(page, code: str, count: int) -> None:
    from playwright.sync_api import expect

    page.get_by_test_id("composer-input").fill(code)
    page.get_by_test_id("composer-input").press("Shift+Enter")
    expect(page.get_by_test_id("code-cell")).to_have_count(count, timeout=60_000)
    expect(page.get_by_test_id("code-cell").nth(count - 1)).to_have_attribute(
        "data-state", "done", timeout=60_000
    )


@pytest.mark.parametrize("viewport", WIDTHS)
def test_a_five_row_table_has_no_pager_and_downloads_as_its_variable(
    stack, web, alice_login, shoot, viewport
):
    from playwright.sync_api import expect

    page = alice_login()
    page.set_viewport_size(viewport)
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    page.get_by_test_id("mode-toggle").click()
    run(page, CELL, 1)

    small = page.get_by_test_id("data-table").first
    expect(small).to_have_attribute("data-state", "grid", timeout=30_000)
    expect(small.locator(".tabulator-row")).to_have_count(5)
    expect(small.locator(".tabulator-paginator")).to_have_count(0)
    expect(small.locator(".tabulator-footer")).to_have_count(0)
    with page.expect_download() as downloading:
        small.get_by_test_id("data-table-download").click()
    download = downloading.value
    assert download.suggested_filename == "sales.csv"
    rows = list(csv.reader(io.StringIO(download.path().read_text(encoding="utf-8-sig"))))
    assert [row[-2:] for row in rows] == [
        ["region", "amount"],
        ["N", "5"],
        ["E", "3"],
        ["S", "8"],
        ["W", "1"],
        ["C", "2"],
    ]
    shoot(page, "five-rows")

    run(page, LONGER, 2)
    longer = page.get_by_test_id("data-table").nth(1)
    expect(longer).to_have_attribute("data-state", "grid", timeout=30_000)
    expect(longer.locator(".tabulator-paginator")).to_have_count(1)
    expect(longer.locator(".tabulator-row")).to_have_count(10)
