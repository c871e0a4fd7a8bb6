"""A DataFrame as an interactive grid: a 2,500-row frame held by no variable shows its first
1,000 rows, sorts by a header click, filters, pages, copies and downloads the rows as CSV, says it
holds only the first 1,000, under the app's Content-Security-Policy; on a share page and a phone
too; and pandas' HTML table stays when the grid's library cannot be loaded. (A frame a variable
holds pages from the kernel: test_dataframe_grid_whole_frame.py.)"""

from __future__ import annotations

import csv
import io
import re

from analyst.models import AnalysisSession, Event, ShareLink
from tests.e2e.test_csp import watched
from tests.e2e.test_reading_a_session import pasted

MIME = "application/vnd.dataresource+json"
FRAME = (
    "import numpy as np, pandas as pd\n"
    "df = pd.DataFrame({'id': range(2500), 'city': ['Oslo', 'Lima', 'Pune', 'Kyiv', 'Accra'] * 500,"
    " 'amount': np.arange(2500) % 7 * 1.5})\n"
    "df"
)


# The same table shown as an expression no variable holds: the grid has the stored rows alone.
UNNAMED = FRAME.rsplit("\n", 1)[0] + "\ndf.copy()"


def run_frame(page, web, code=UNNAMED):
    from playwright.sync_api import expect

    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    page.get_by_test_id("mode-toggle").click()
    page.get_by_test_id("composer-input").fill(code)
    page.get_by_test_id("composer-input").press("Control+Enter")
    expect(page.get_by_test_id("code-cell").first).to_have_attribute("data-state", "done", timeout=60_000)


def column_of(table, name: str) -> list[str]:
    """The text of a column's cells on the grid's current page."""
    header = table.locator(".tabulator-col", has_text=re.compile(rf"^{name}$"))
    field = header.get_attribute("tabulator-field")
    return table.locator(f".tabulator-row .tabulator-cell[tabulator-field={field}]").all_inner_texts()


def test_a_dataframe_is_a_grid_that_sorts_filters_pages_copies_and_downloads(stack, web, alice_login, shoot):
    from playwright.sync_api import expect

    page = alice_login()
    page.context.grant_permissions(["clipboard-write"])
    said = watched(page)
    run_frame(page, web)
    table = page.get_by_test_id("data-table")
    expect(table).to_have_attribute("data-state", "grid", timeout=30_000)
    expect(table.get_by_test_id("data-table-note")).to_have_text(
        "The first 1,000 of 2,500 rows are here: sorting, filtering, copying and downloading work on those."
    )
    rows = table.locator(".tabulator-row")
    expect(rows).to_have_count(10)
    assert column_of(table, "id") == [str(n) for n in range(10)]
    assert column_of(table, "amount")[:3] == ["0.0", "1.5", "3.0"]
    counter = table.locator(".tabulator-page-counter")
    expect(counter).to_have_text("Showing 1-10 of 1000 rows")
    shoot(page, "grid")
    # The data came as an artifact (a 1,000-row table is too big to sit in its event).
    result = Event.objects.get(type="result").payload
    assert MIME in result["artifacts"] and MIME not in result["data"] and "text/html" in result["data"]

    page_two = table.locator(".tabulator-page[data-page=next]")
    page_two.click()
    expect(counter).to_have_text("Showing 11-20 of 1000 rows")
    assert column_of(table, "id") == [str(n) for n in range(10, 20)]

    header = table.locator(".tabulator-col", has_text=re.compile(r"^city$"))
    header.click()  # ascending
    expect(header).to_have_attribute("aria-sort", "ascending")
    expect(counter).to_have_text("Showing 1-10 of 1000 rows")  # sorting starts again at page 1
    assert set(column_of(table, "city")) == {"Accra"}
    header.click()
    expect(header).to_have_attribute("aria-sort", "descending")
    assert set(column_of(table, "city")) == {"Pune"}

    table.get_by_test_id("data-table-filter").fill("kyiv")
    expect(counter).to_have_text("Showing 1-10 of 200 rows")
    assert set(column_of(table, "city")) == {"Kyiv"}
    shoot(page, "filtered")

    with page.expect_download() as downloading:
        table.get_by_test_id("data-table-download").click()
    download = downloading.value
    assert download.suggested_filename == "table.csv"
    content = download.path().read_text(encoding="utf-8-sig")
    lines = list(csv.reader(io.StringIO(content)))
    assert lines[0] == ["index", "id", "city", "amount"]
    assert len(lines) == 1 + 200 and {line[2] for line in lines[1:]} == {"Kyiv"}
    assert lines[1] == ["3", "3", "Kyiv", "4.5"]  # every page of the filtered rows, in their order

    table.get_by_test_id("data-table-copy").click()
    copied = pasted(page).splitlines()
    assert copied[0] == "index\tid\tcity\tamount" and len(copied) == 201 and copied[1] == "3\t3\tKyiv\t4.5"
    page.get_by_test_id("copy-output").click()  # the cell's Copy output: the same rows
    assert pasted(page).splitlines() == copied
    # A range of cells, selected with the mouse, copied with Ctrl+C.
    cells = table.locator(".tabulator-row .tabulator-cell[tabulator-field=c1]")
    cells.nth(0).click()
    cells.nth(2).click(modifiers=["Shift"])
    page.keyboard.press("Control+C")
    assert pasted(page).splitlines() == ["3", "8", "13"]

    # A column is resized by dragging its header's edge.
    amount = table.locator(".tabulator-col", has_text=re.compile(r"^amount$"))
    before = amount.bounding_box()
    handle = amount.locator("xpath=following-sibling::*[1][contains(@class, 'tabulator-col-resize-handle')]")
    handle.hover()
    page.mouse.down()
    page.mouse.move(before["x"] + before["width"] + 80, before["y"] + before["height"] / 2)
    page.mouse.up()
    assert amount.bounding_box()["width"] > before["width"] + 40

    assert page.evaluate("window.__violations") == [] and said == []


def test_the_html_table_stays_when_the_grid_cannot_be_loaded(stack, web, alice_login, shoot):
    from playwright.sync_api import expect

    page = alice_login()
    page.route("**/static/vendor/tabulator_esm.min.js", lambda route: route.abort())
    run_frame(page, web)
    table = page.get_by_test_id("data-table")
    expect(table).to_have_attribute("data-state", "fallback", timeout=30_000)
    expect(table.get_by_test_id("table-output").locator("table")).to_contain_text("Oslo")
    expect(table.get_by_test_id("data-grid")).to_have_count(0)
    expect(table).to_contain_text("2500 rows × 3 columns")  # pandas' own note under its table
    shoot(page, "fallback")


def test_a_share_page_and_a_phone_show_the_grid(stack, web, alice_login, browser, shoot):
    from playwright.sync_api import expect

    page = alice_login()
    run_frame(page, web)
    expect(page.get_by_test_id("data-table")).to_have_attribute("data-state", "grid", timeout=30_000)
    # What a column's name or a value holds is text, never markup.
    composer = page.get_by_test_id("composer-input")
    composer.fill("pd.DataFrame({'<img src=x>': ['<b>bold</b>', None], 'x': [np.nan, np.inf]})")
    composer.press("Control+Enter")
    hostile = page.get_by_test_id("data-table").nth(1)
    expect(hostile).to_have_attribute("data-state", "grid", timeout=60_000)
    expect(hostile.locator(".tabulator-col-title").nth(1)).to_have_text("<img src=x>")
    expect(hostile.locator(".tabulator-cell[tabulator-field=c1]")).to_have_text(["<b>bold</b>", "None"])
    assert hostile.get_by_test_id("data-grid").locator("img, b").count() == 0
    # What is missing reads as pandas prints it, greyed; an infinity as inf.
    expect(hostile.locator(".tabulator-cell[tabulator-field=c2]")).to_have_text(["NaN", "inf"])
    expect(hostile.locator(".tabulator-cell.missing")).to_have_count(2)
    link = ShareLink.objects.create(session=AnalysisSession.objects.get(owner__username="alice"))

    phone = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        viewer = phone.new_page()
        said = watched(viewer)
        viewer.goto(f"{web}/s/{link.token}/")
        table = viewer.get_by_test_id("data-table").first
        expect(table).to_have_attribute("data-state", "grid", timeout=30_000)  # read through the share
        expect(table.locator(".tabulator-row")).to_have_count(10)
        expect(table.locator(".tabulator-page-counter")).to_have_text("Showing 1-10 of 1000 rows")
        # On a phone the grid scrolls within itself; the page does not scroll sideways.
        assert viewer.evaluate("document.scrollingElement.scrollWidth") <= 390
        grid = table.get_by_test_id("data-grid").bounding_box()
        assert grid["x"] >= 0 and grid["x"] + grid["width"] <= 390
        shoot(viewer, "phone")
        assert viewer.evaluate("window.__violations") == [] and said == []
    finally:
        phone.close()

    # Without scripts, the share page links a static copy, where the same table is HTML.
    plain = browser.new_context(java_script_enabled=False)
    try:
        reader = plain.new_page()
        reader.goto(f"{web}/s/{link.token}/")
        reader.get_by_test_id("static-link").get_by_role("link").click()
        reader.wait_for_url(f"{web}/s/{link.token}/static")
        expect(reader.locator("table").filter(has_text="<img src=x>")).to_have_count(1)
        assert reader.locator("table img, table b").count() == 0
        shoot(reader, "without-scripts")
    finally:
        plain.close()
