"""A DataFrame a variable holds is a grid over the whole frame, at 1280 px and on a 390 px phone:
the kernel answers its pages, its sort and its filter (all 4 'Anchorage' rows of 3,376, 3 of them
past row 1,000), and its CSV download is the whole filtered, sorted frame; once the variable holds
another table, the grid falls back to the rows stored with the cell, and says so."""

from __future__ import annotations

import csv
import io
import re

import pytest

from tests.e2e.test_csp import watched
from tests.e2e.test_dataframe_grid import column_of, run_frame

FRAME = (
    "import pandas as pd\n"
    "cities = ['Oslo', 'Lima', 'Pune', 'Kyiv']\n"
    "df = pd.DataFrame({'id': range(3376),"
    " 'city': ['Anchorage' if i % 844 == 5 else cities[i % 4] for i in range(3376)]})\n"
    "df"
)


@pytest.mark.parametrize("width", [1280, 390])
def test_the_grid_sorts_filters_pages_and_downloads_the_whole_frame(stack, web, alice_login, shoot, width):
    from playwright.sync_api import expect

    page = alice_login()
    page.set_viewport_size({"width": width, "height": 900})
    said = watched(page)
    run_frame(page, web, FRAME)
    table = page.get_by_test_id("data-table")
    expect(table).to_have_attribute("data-live", "live", timeout=30_000)
    counter = table.locator(".tabulator-page-counter")
    expect(counter).to_have_text("Showing 1-10 of 3376 rows")
    expect(table.get_by_test_id("data-table-note")).to_be_hidden()

    table.get_by_test_id("data-table-filter").fill("anchorage")
    expect(counter).to_have_text("Showing 1-4 of 4 rows")
    expect(table.get_by_test_id("data-table-note")).to_have_text("4 of 3,376 rows match.")
    assert column_of(table, "id") == ["5", "849", "1693", "2537"]
    shoot(page, f"filtered-{width}")

    header = table.locator(".tabulator-col", has_text=re.compile(r"^id$"))
    header.click()
    header.click()  # descending
    expect(header).to_have_attribute("aria-sort", "descending")
    expect(table.locator(".tabulator-row").first).to_contain_text("2537")
    assert column_of(table, "id") == ["2537", "1693", "849", "5"]

    with page.expect_download() as downloading:
        table.get_by_test_id("data-table-download").click()
    download = downloading.value
    assert download.suggested_filename == "df.csv"
    lines = list(csv.reader(io.StringIO(download.path().read_text(encoding="utf-8"))))
    assert lines == [["index", "id", "city"]] + [[str(i), str(i), "Anchorage"] for i in (2537, 1693, 849, 5)]

    table.get_by_test_id("data-table-filter").fill("")
    expect(counter).to_have_text("Showing 1-10 of 3376 rows")
    table.locator(".tabulator-page[data-page=last]").click()
    expect(counter).to_have_text("Showing 3371-3376 of 3376 rows")
    assert column_of(table, "id")[-1] == "0"  # still descending, over the whole frame
    if width == 390:
        assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
    shoot(page, f"last-page-{width}")
    assert page.evaluate("window.__violations") == [] and said == []


def test_once_the_variable_holds_another_table_the_stored_rows_come_back(stack, web, alice_login, shoot):
    from playwright.sync_api import expect

    page = alice_login()
    run_frame(page, web, FRAME)
    expect(page.get_by_test_id("data-table")).to_have_attribute("data-live", "live", timeout=30_000)
    composer = page.get_by_test_id("composer-input")
    composer.fill("df = df.head(3)")
    composer.press("Control+Enter")
    expect(page.get_by_test_id("code-cell").nth(1)).to_have_attribute("data-state", "done", timeout=60_000)
    page.reload()
    table = page.get_by_test_id("data-table")
    expect(table).to_have_attribute("data-live", "gone", timeout=30_000)
    expect(table.get_by_test_id("data-table-note")).to_contain_text(
        "no longer a DataFrame or Series named 'df' in the kernel: the 1,000 rows stored with the cell"
    )
    expect(table.locator(".tabulator-page-counter")).to_have_text("Showing 1-10 of 1000 rows")
    table.get_by_test_id("data-table-filter").fill("anchorage")
    expect(table.locator(".tabulator-page-counter")).to_have_text(
        "Showing 1-2 of 2 rows"
    )  # of the stored 1,000
    shoot(page, "gone")
