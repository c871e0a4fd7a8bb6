"""Uploads of any shape, as a user meets them in Chromium: what the sandbox found in each file
and its preview, reading a file differently, several files at once, a workbook sheet by sheet,
deleting one, a shared page's read-only panel, the narrow screen, and a question asked right
after an upload (the model already told of the file)."""

from __future__ import annotations

import json
import re

import pytest

from analyst.models import AnalysisSession, DataFile, Event
from tests import made_files
from tests.fakes.model_server import anthropic_text
from tests.integration.conftest import wait_for

LONG = 90_000  # ms: the first placement of a session also starts its sandbox

# A French Excel export: cp1252 (with characters only cp1252 has: € œ ’), ';' and decimal ','.
FRENCH_CSV = (
    "produit;catégorie;prix unitaire;quantité vendue;remise accordée;région de vente;commentaire\n"
    + "".join(
        f"Cœur de bœuf n°{i};légumes;{i},50;{i * 3};0,{i % 10}5;Île-de-France;l’été, 5 €\n"
        for i in range(1, 41)
    )
).encode("cp1252")


def open_session(page) -> AnalysisSession:
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    return AnalysisSession.objects.get(owner__username="alice")


def file_row(page, name: str):
    return page.get_by_test_id("file-row").filter(
        has=page.get_by_test_id("file-name").get_by_text(name, exact=True)
    )


def ready(row):
    """Wait until the sandbox has described the upload shown in ``row``."""
    from playwright.sync_api import expect

    expect(row).to_have_attribute("data-status", "ready", timeout=LONG)
    return row


# Every "Reading … in the sandbox…" line the panel shows, however briefly.
RECORD_READING = """() => {
  window.readingSeen = [];
  new MutationObserver(() => {
    for (const node of document.querySelectorAll("[data-testid=file-reading]")) {
      if (!window.readingSeen.includes(node.textContent)) window.readingSeen.push(node.textContent);
    }
  }).observe(document.body, { childList: true, subtree: true });
}"""


def test_a_french_excel_csv_is_detected_and_previewed(stack, web, browser, shoot, alice_login, tmp_path):
    from playwright.sync_api import expect

    page = alice_login()
    open_session(page)
    page.evaluate(RECORD_READING)
    ventes = tmp_path / "ventes.csv"
    ventes.write_bytes(FRENCH_CSV)
    page.get_by_test_id("upload-input").set_input_files(str(ventes))

    row = ready(file_row(page, "ventes.csv"))
    assert "Reading ventes.csv in the sandbox…" in page.evaluate("window.readingSeen")
    shape = row.get_by_test_id("file-table")
    expect(shape).to_have_text("40 rows × 7 columns · cp1252 · ';' · decimal ','")
    # The preview opens by itself for the file just uploaded, decoded and split right.
    preview = row.get_by_test_id("preview-table")
    expect(preview).to_be_visible()
    expect(preview.locator("th").first).to_contain_text("produit")
    expect(preview.locator("th").nth(2)).to_contain_text("prix unitaire")
    expect(preview.locator("th").nth(2)).to_contain_text("float64")  # decimal commas read as numbers
    expect(preview.locator("tbody tr").first).to_contain_text("Cœur de bœuf n°1")
    expect(preview.locator("tbody tr").first).to_contain_text("l’été, 5 €")
    expect(row.get_by_test_id("preview-load")).to_contain_text("encoding='cp1252'")
    shoot(page, "previewed")

    # The Preview button closes and opens it again.
    toggle = row.get_by_test_id("file-preview-toggle")
    toggle.click()
    expect(row.get_by_test_id("file-preview")).to_have_count(0)
    toggle.click()
    expect(preview).to_be_visible()


def test_an_encoding_said_wrong_says_why_and_can_be_put_right(
    stack, web, browser, shoot, alice_login, tmp_path
):
    from playwright.sync_api import expect

    page = alice_login()
    open_session(page)
    ventes = tmp_path / "ventes.csv"
    ventes.write_bytes(FRENCH_CSV)
    page.get_by_test_id("upload-input").set_input_files(str(ventes))
    row = ready(file_row(page, "ventes.csv"))
    rereads = page.get_by_test_id("file-added").filter(has_text="Read again data/ventes.csv")

    row.get_by_test_id("option-encoding").select_option("utf-8")
    row.get_by_test_id("options-apply").click()
    expect(rereads).to_have_count(1, timeout=LONG)
    expect(ready(row)).to_contain_text("is not utf-8")  # the panel says why, and keeps the file
    shoot(page, "wrong-encoding")

    row.get_by_test_id("option-encoding").select_option("cp1252")
    row.get_by_test_id("options-apply").click()
    expect(rereads).to_have_count(2, timeout=LONG)
    expect(ready(row).get_by_test_id("file-table")).to_have_text(
        "40 rows × 7 columns · cp1252 · ';' · decimal ','"
    )
    expect(row).not_to_contain_text("is not utf-8")
    expect(row.get_by_test_id("preview-table").locator("tbody tr").first).to_contain_text("Cœur de bœuf n°1")

    # On a phone-sized screen the panel is a drawer; the wide table scrolls inside its own box.
    page.set_viewport_size({"width": 390, "height": 844})
    page.get_by_test_id("header-menu").click()  # no room in the header: its controls are a menu
    page.get_by_role("button", name="Files", exact=True).click()
    # A function, not an expression: Playwright polls an expression with eval, which the CSP refuses.
    in_view = "() => document.querySelector('.files-panel').getBoundingClientRect().right <= 390"
    page.wait_for_function(in_view)
    expect(row.get_by_test_id("preview-table")).to_be_in_viewport()
    scroll = row.locator(".preview-scroll")
    widths = scroll.evaluate("n => [n.scrollWidth, n.clientWidth, n.getBoundingClientRect().right]")
    assert widths[0] > widths[1], f"the table is wider than its box, which scrolls: {widths}"
    assert widths[2] <= 390, f"the box stays on the screen: {widths}"
    wide = page.evaluate(
        """() => [...document.querySelectorAll('body *')].filter(n => n.getBoundingClientRect().right > 390
            && getComputedStyle(n).position !== 'fixed' && !n.closest('.files-panel'))
            .map(n => n.tagName + '.' + n.className + ' ' + Math.round(n.getBoundingClientRect().right))"""
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= 390, wide[:20]
    shoot(page, "narrow")


@pytest.mark.slow
def test_several_files_at_once_and_a_workbook_sheet_by_sheet(
    stack, web, browser, shoot, alice_login, tmp_path
):
    from playwright.sync_api import expect

    # Written by openpyxl and pyarrow (tests/made_files.py), zipped by zipfile.
    economy = tmp_path / "economy.xlsx"
    economy.write_bytes(made_files.workbook())
    airports = tmp_path / "airports.parquet"
    airports.write_bytes(made_files.parquet())
    bundle = tmp_path / "bundle.zip"
    members = {"north.csv": b"store,units\nA,3\nB,5\n", "south/stock.tsv": b"sku\tcount\tprice\nx1\t4\t2.5\n"}
    bundle.write_bytes(made_files.zipped(members))
    page = alice_login()
    session = open_session(page)
    sent = []  # the uploads' requests, as they begin and end

    def note(request, what: str) -> None:
        if request.method == "POST" and request.url.endswith("/files"):
            sent.append(what)

    page.on("request", lambda request: note(request, "begins"))
    page.on("response", lambda response: note(response.request, "ends"))  # it is answered
    page.get_by_test_id("upload-input").set_input_files([str(economy), str(airports), str(bundle)])

    workbook = ready(file_row(page, "economy.xlsx"))
    columnar = ready(file_row(page, "airports.parquet"))
    archive = ready(file_row(page, "bundle.zip"))
    expect(page.get_by_test_id("file-row")).to_have_count(3)  # the zip's members are its tables
    assert sent == ["begins", "ends"] * 3, "one after the other"
    assert sorted(DataFile.objects.filter(session=session).values_list("name", flat=True)) == [
        "airports.parquet",
        "bundle.zip",
        "economy.xlsx",
    ]
    members = archive.get_by_test_id("file-table")
    expect(members).to_have_count(2)
    expect(members.filter(has_text="bundle/north.csv:")).to_contain_text("2 rows × 2 columns")
    expect(members.filter(has_text="bundle/south/stock.tsv:")).to_contain_text("1 row × 3 columns")
    sheets = workbook.get_by_test_id("file-table")
    expect(sheets).to_have_count(2)
    expect(sheets.nth(0)).to_contain_text("employment:")
    expect(sheets.nth(0)).to_contain_text("3 rows × 2 columns")
    expect(sheets.nth(1)).to_contain_text("gdp:")
    expect(sheets.nth(1)).to_contain_text("2 rows × 4 columns")
    expect(columnar.get_by_test_id("file-table")).to_have_text("6 rows × 2 columns")

    # The file sent last opens its preview; the others open with their button.
    expect(archive.get_by_test_id("preview-table")).to_contain_text("store")
    expect(columnar.get_by_test_id("file-preview")).to_have_count(0)
    columnar.get_by_test_id("file-preview-toggle").click()
    expect(columnar.get_by_test_id("preview-table")).to_contain_text("NY")
    expect(workbook.get_by_test_id("file-preview")).to_have_count(0)
    workbook.get_by_test_id("file-preview-toggle").click()
    picker = workbook.get_by_test_id("preview-table-picker")
    assert picker.locator("option").all_inner_texts() == ["employment", "gdp"]
    table = workbook.get_by_test_id("preview-table")
    expect(table.locator("th").first).to_contain_text("year")
    picker.select_option(label="gdp")
    expect(table.locator("th").first).to_contain_text("country")
    expect(table).to_contain_text("DE")
    expect(workbook.get_by_test_id("preview-load")).to_contain_text("sheet_name='gdp'")
    shoot(page, "workbook")
    # The transcript names the sheets too.
    expect(page.get_by_test_id("file-added").filter(has_text="economy.xlsx")).to_contain_text(
        "2 sheets: employment, gdp"
    )


PIPES = "city|population|area\n" + "".join(f"Town {i}|{1000 * i}|{i}.5\n" for i in range(1, 9))
TITLED = "Monthly report, printed 2024-05-01\nmonth,sales,returns\n" + "".join(
    f"2024-{m:02d},{m * 100},{m}\n" for m in range(1, 7)
)


@pytest.mark.slow
def test_reading_a_file_differently_re_describes_it(stack, web, browser, shoot, alice_login, tmp_path):
    from playwright.sync_api import expect

    page = alice_login()
    session = open_session(page)
    towns = tmp_path / "towns.txt"
    towns.write_text(PIPES)
    page.get_by_test_id("upload-input").set_input_files(str(towns))
    row = ready(file_row(page, "towns.txt"))
    expect(row.get_by_test_id("file-table")).to_have_text("8 rows × 3 columns · utf-8 · '|'")
    expect(row.get_by_test_id("preview-table").locator("th")).to_have_count(3)

    def apply(target, option: str, value: str, times: int) -> None:
        """Correct one option, then wait for the file's new description (its "Read again")."""
        target.get_by_test_id(option).select_option(value)
        target.get_by_test_id("options-apply").click()
        name = target.get_by_test_id("file-name").inner_text()
        again = page.get_by_test_id("file-added").filter(has_text=f"Read again data/{name}")
        expect(again).to_have_count(times, timeout=LONG)
        ready(target)

    # Said wrong, the file reads as one column of "city|population|area"...
    apply(row, "option-delimiter", ";", 1)
    expect(row.get_by_test_id("file-table")).to_contain_text("8 rows × 1 column")
    header = row.get_by_test_id("preview-table").locator("th")
    expect(header).to_have_count(1)
    expect(header.first).to_contain_text("city|population|area")
    assert DataFile.objects.get(session=session).read_options["delimiter"] == ";"
    shoot(page, "wrong-delimiter")
    # ... said right again, as three ...
    apply(row, "option-delimiter", "|", 2)
    expect(row.get_by_test_id("file-table")).to_contain_text("8 rows × 3 columns")
    expect(row.get_by_test_id("preview-table").locator("th")).to_have_count(3)
    expect(row.get_by_test_id("option-delimiter")).to_have_value("|")  # the correction in force
    # ... and with no header row, its header line is the first row of data.
    apply(row, "option-header-row", "none", 3)
    expect(row.get_by_test_id("file-table")).to_contain_text("9 rows × 3 columns")
    expect(row.get_by_test_id("preview-table").locator("tbody tr").first).to_contain_text("city")

    # A title line above the header: told where the header is, the columns get their names.
    report = tmp_path / "report.csv"
    report.write_text(TITLED)
    page.get_by_test_id("upload-input").set_input_files(str(report))
    titled = ready(file_row(page, "report.csv"))
    apply(titled, "option-header-row", "1", 1)
    expect(titled.get_by_test_id("file-table")).to_contain_text("6 rows × 3 columns")
    expect(titled.get_by_test_id("preview-table").locator("th span")).to_have_text(
        ["month", "sales", "returns"]
    )
    assert DataFile.objects.get(session=session, name="report.csv").read_options["header_row"] == 1
    shoot(page, "header-row")


# Files dragged from the desktop and dropped anywhere on the page.
DROP = """(files) => {
  const data = new DataTransfer();
  for (const [name, text] of Object.entries(files)) {
    data.items.add(new File([text], name, { type: "text/csv" }));
  }
  for (const type of ["dragenter", "dragover", "drop"]) {
    document.body.dispatchEvent(new DragEvent(type, { dataTransfer: data, bubbles: true, cancelable: true }));
  }
}"""


def test_a_deleted_upload_leaves_the_panel_and_the_session(stack, web, browser, shoot, alice_login, tmp_path):
    from playwright.sync_api import expect

    page = alice_login()
    session = open_session(page)
    page.evaluate(DROP, {"keep.csv": "a,b\n1,2\n", "drop.csv": "c,d\n3,4\n"})  # dropped on the page
    ready(file_row(page, "keep.csv"))
    ready(file_row(page, "drop.csv"))
    other_tab = page.context.new_page()  # the same person's second tab on the session
    other_tab.goto(page.url)
    ready(file_row(other_tab, "drop.csv"))

    asked = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
    file_row(page, "drop.csv").get_by_test_id("file-delete").click()
    expect(file_row(page, "drop.csv")).to_have_count(0)
    assert asked and "drop.csv" in asked[0]
    expect(file_row(other_tab, "drop.csv")).to_have_count(0, timeout=30_000)  # told by file_removed
    expect(file_row(other_tab, "keep.csv")).to_have_count(1)
    assert list(DataFile.objects.filter(session=session).values_list("name", flat=True)) == ["keep.csv"]
    listed = page.evaluate(
        "async (url) => (await (await fetch(url)).json()).files.map(f => f.path)",
        f"/api/sessions/{session.id}/files",
    )
    assert "data/drop.csv" not in listed and "data/keep.csv" in listed
    expect(page.get_by_test_id("file-removed")).to_contain_text("data/drop.csv")
    shoot(page, "deleted")

    # A Delete thought better of changes nothing.
    page.once("dialog", lambda dialog: dialog.dismiss())
    file_row(page, "keep.csv").get_by_test_id("file-delete").click()
    expect(file_row(page, "keep.csv")).to_have_count(1)
    assert DataFile.objects.filter(session=session).count() == 1


def test_a_shared_page_previews_files_but_changes_nothing(stack, web, browser, shoot, alice_login, tmp_path):
    from playwright.sync_api import expect

    page = alice_login()
    open_session(page)
    towns = tmp_path / "towns.txt"
    towns.write_text(PIPES)
    page.get_by_test_id("upload-input").set_input_files(str(towns))
    ready(file_row(page, "towns.txt"))
    page.get_by_label("Let viewers download files").check()
    page.get_by_test_id("create-share").click()
    share_url = page.get_by_test_id("share-url").first.input_value()

    viewer = browser.new_context(viewport={"width": 1280, "height": 900})
    shared = viewer.new_page()
    shared.goto(share_url)
    row = file_row(shared, "towns.txt")
    expect(row.get_by_test_id("file-table")).to_have_text("8 rows × 3 columns · utf-8 · '|'", timeout=30_000)
    expect(row.get_by_test_id("file-preview")).to_have_count(0)
    row.get_by_test_id("file-preview-toggle").click()
    expect(row.get_by_test_id("preview-table")).to_contain_text("Town 1")
    for control in ("upload-input", "file-delete", "read-options", "options-apply", "file-retry"):
        expect(shared.get_by_test_id(control)).to_have_count(0)
    shoot(shared, "shared")
    viewer.close()


def test_a_question_right_after_an_upload_is_answered_knowing_the_file(
    stack, web, browser, shoot, alice_login, tmp_path
):
    from playwright.sync_api import expect

    stack.script(anthropic_text("The file has sales by city."))
    page = alice_login()
    session = open_session(page)
    # Big enough that the sandbox is still reading it when the question comes.
    sales = tmp_path / "sales_by_city.csv"
    sales.write_text(
        "city;amount;when\n"
        + "".join(f"City {i % 97};{i},25;2024-01-{i % 28 + 1:02d}\n" for i in range(200_000))
    )
    page.get_by_test_id("upload-input").set_input_files(str(sales))
    expect(file_row(page, "sales_by_city.csv")).to_have_count(1, timeout=30_000)  # the server has it
    composer = page.get_by_test_id("composer-input")
    composer.fill("What is in the file?")
    composer.press("Enter")
    expect(page.get_by_test_id("assistant-message")).to_contain_text("sales by city", timeout=LONG)
    shoot(page, "answered")

    stored = wait_for(session)
    types = [event["type"] for event in stored]
    waited = [event for event in stored if event["type"] == "files_waiting"]
    if waited:
        # The turn waited for the file: the page said so, and hid it once the turn went on.
        assert [f["name"] for f in waited[0]["payload"]["files"]] == ["sales_by_city.csv"]
        notice = page.get_by_test_id("files-waiting")
        expect(notice).to_have_count(1)
        expect(notice).to_have_text("Reading sales_by_city.csv…")
        expect(notice).to_be_hidden()
        assert types.index("files_waiting") < types.index("file_added") < types.index("turn_done")
    else:
        # Described before the turn began: the file_added event came before the question.
        assert types.index("file_added") < types.index("user_message"), types
    assert stack.requests, "the model was asked"
    system = json.dumps(stack.requests[0].json.get("system"), ensure_ascii=False)
    assert "data/sales_by_city.csv" in system
    for column in ("city", "amount", "when"):
        assert column in system, f"the model's first request names column {column!r}"
    assert "decimal" in system
    assert Event.objects.filter(session=session, type="files_waiting").count() == len(waited)


# Every text the status bar shows while the turn runs, in order, however briefly.
RECORD_STATUS = """() => {
  window.statusSeen = [];
  const bar = document.querySelector("[data-testid=running-status]");
  new MutationObserver(() => {
    if (window.statusSeen.at(-1) !== bar.textContent) window.statusSeen.push(bar.textContent);
  }).observe(bar, { childList: true, characterData: true, subtree: true });
}"""


def test_the_status_bar_says_which_files_a_question_waits_for(
    stack, web, browser, alice_login, media, settings
):
    """An upload whose placement no worker has started yet (its queue is behind): the turn reads
    it itself first, and the status bar says so until the model is asked."""
    from django.core.files.base import ContentFile
    from playwright.sync_api import expect

    stack.script(anthropic_text("Four regions."))
    page = alice_login()
    session = open_session(page)
    content = made_files.SALES_CSV
    settings.MEDIA_ROOT = media  # the worker's
    data_file = DataFile(session=session, name="sales.csv", path="data/sales.csv", size=len(content))
    data_file.stored.save("sales.csv", ContentFile(content))  # placing, never sent
    page.evaluate(RECORD_STATUS)
    composer = page.get_by_test_id("composer-input")
    composer.fill("What is in the file?")
    composer.press("Enter")
    expect(page.get_by_test_id("assistant-message")).to_contain_text("Four regions.", timeout=LONG)
    seen = page.evaluate("window.statusSeen")
    assert "Reading sales.csv…" in seen, seen
    after = seen[seen.index("Reading sales.csv…") + 1 :]
    assert after[:1] == ["Thinking…"] and "Writing…" in after, seen  # the model is asked once it is read
    assert "data/sales.csv" in stack.requests[0].json["system"]


def test_a_question_sent_while_its_file_is_still_uploading_goes_once_the_file_is_there(
    stack, web, browser, alice_login
):
    """Until its bytes are at the server nothing there knows of the file: the page holds the
    question until then (the upload's request is held here, as a slow link would)."""
    from playwright.sync_api import expect

    stack.script(anthropic_text("Four regions."))
    page = alice_login()
    session = open_session(page)
    held = []

    def hold_uploads(route):
        if route.request.method == "POST":
            held.append(route)
        else:
            route.continue_()

    page.route(f"**/api/sessions/{session.id}/files", hold_uploads)
    page.get_by_test_id("upload-input").set_input_files(
        files=[{"name": "sales.csv", "mimeType": "text/csv", "buffer": made_files.SALES_CSV}]
    )
    page.wait_for_function("() => document.querySelector('[data-testid=upload-progress]') !== null")
    while not held:
        page.wait_for_timeout(50)
    composer = page.get_by_test_id("composer-input")
    composer.fill("What is in the file?")
    composer.press("Enter")
    expect(page.get_by_test_id("composer-waiting")).to_have_text("Sends once sales.csv is uploaded…")
    assert not session.turns.exists(), "the question was sent before its file"
    held[0].continue_()
    expect(page.get_by_test_id("assistant-message")).to_contain_text("Four regions.", timeout=LONG)
    expect(page.get_by_test_id("composer-waiting")).to_be_hidden()
    system = stack.requests[0].json["system"]
    assert "data/sales.csv" in system and "unit_price (float64" in system
