"""Private data kept from the model, as a user meets it in Chromium: a column reading the file
proposed as sensitive confirmed in the files panel, the session's privacy control set to schema
only in the sidebar, both kept after a reload; the page still shows what the model is kept from."""

from __future__ import annotations

from analyst.models import AnalysisSession, DataFile
from tests.e2e.test_uploads import LONG, file_row, open_session, ready
from tests.fakes.model_server import anthropic_text, anthropic_tool_call
from tests.integration.conftest import wait_for

CUSTOMERS = (
    b"name,email,city\n"
    b"Odalys Vantreight,odalys@vantreight.net,Oslo\n"
    b"Brannock Okonkwo,b.okonkwo@farrow.org,Lima\n"
    b"Quillon Ystrad,quillon@ystrad.io,Rome\n"
)


def test_a_proposed_column_is_confirmed_and_schema_mode_set(stack, web, shoot, alice_login, tmp_path):
    from playwright.sync_api import expect

    page = alice_login()
    session = open_session(page)
    upload = tmp_path / "customers.csv"
    upload.write_bytes(CUSTOMERS)
    page.get_by_test_id("upload-input").set_input_files(str(upload))
    row = ready(file_row(page, "customers.csv"))

    proposed = row.locator("[data-testid=column-proposed][data-column=email]")
    expect(proposed).to_contain_text("email looks like e-mail addresses")
    expect(row.get_by_test_id("column-proposed")).to_have_count(1)
    shoot(page, "proposed")
    proposed.get_by_test_id("mark-sensitive").click()
    sensitive = row.locator("[data-testid=column-sensitive][data-column=email]")
    expect(sensitive).to_contain_text("kept from the model")
    expect(row.get_by_test_id("column-proposed")).to_have_count(0)
    data_file = DataFile.objects.get(session=session)
    assert (data_file.column_marks, data_file.proposed_marks) == ({"": {"email": "sensitive"}}, {})

    if not page.get_by_test_id("privacy-mode").is_visible():  # a narrow screen: the sidebar is a popover
        page.get_by_test_id("session-tools-open").click()
    page.get_by_test_id("privacy-mode").select_option("schema")
    page.get_by_test_id("send-chart-images").uncheck()
    expect(page.get_by_test_id("send-chart-images")).not_to_be_checked()
    shoot(page, "schema")
    for _ in range(50):  # the checkbox shows the server's answer; the row may lag a moment
        session.refresh_from_db()
        if not session.send_chart_images:
            break
        page.wait_for_timeout(100)
    assert (session.privacy, session.send_chart_images) == ("schema", False)

    page.reload()
    row = ready(file_row(page, "customers.csv"))
    expect(row.locator("[data-testid=column-sensitive][data-column=email]")).to_be_visible()
    expect(page.get_by_test_id("privacy-mode")).to_have_value("schema")
    expect(page.get_by_test_id("send-chart-images")).not_to_be_checked()

    stack.script(
        anthropic_tool_call(
            "run_python", {"code": "import pandas as pd\nprint(pd.read_csv('data/customers.csv'))"}
        ),
        anthropic_text("Three customers."),
    )
    composer = page.get_by_test_id("composer-input")
    composer.fill("Who are they?")
    composer.press("Enter")
    wait_for(AnalysisSession.objects.get(id=session.id))
    expect(page.get_by_test_id("cell-output").last).to_contain_text("odalys@vantreight.net")
    expect(page.get_by_test_id("cell-output").last).to_contain_text("Odalys Vantreight")
    sent = b"".join(request.body for request in stack.requests)
    assert b"odalys@vantreight.net" not in sent and b"Odalys Vantreight" not in sent
    assert b"col:email" in sent and b"col:name" in sent

    row.locator("[data-testid=column-sensitive][data-column=email]").get_by_test_id(
        "unmark-sensitive"
    ).click()
    expect(row.get_by_test_id("column-sensitive")).to_have_count(0)
    assert DataFile.objects.get(session=session).column_marks == {}


def test_a_listing_asked_for_before_an_unmark_does_not_bring_the_mark_back(stack, web, alice_login, tmp_path):
    """The files are listed again when a turn ends; a listing asked for before the user's Unmark
    and answered after it (a slow link, or a busy server) is older than the Unmark's own answer.
    The listings are held here to give that order every time: the older one is not shown, the
    files are listed again. (Seen in CI: the mark came back after Unmark.)"""
    from playwright.sync_api import expect

    page = alice_login()
    session = open_session(page)
    upload = tmp_path / "customers.csv"
    upload.write_bytes(CUSTOMERS)
    page.get_by_test_id("upload-input").set_input_files(str(upload))
    row = ready(file_row(page, "customers.csv"))
    row.locator("[data-testid=column-proposed][data-column=email]").get_by_test_id("mark-sensitive").click()
    sensitive = row.locator("[data-testid=column-sensitive][data-column=email]")
    expect(sensitive).to_be_visible()

    held = []  # (route, the answer the server gave when it was asked)
    holding = True

    def hold_listings(route):
        if route.request.method == "GET" and holding:
            held.append((route, route.fetch()))
        else:
            route.continue_()

    def wait_for_listings(count):
        for _ in range(200):
            if len(held) >= count:
                return
            page.wait_for_timeout(50)
        raise AssertionError(f"{len(held)} listings asked for, not {count}")

    page.route(f"**/api/sessions/{session.id}/files", hold_listings)
    stack.script(anthropic_text("Three customers."))
    composer = page.get_by_test_id("composer-input")
    composer.fill("How many customers?")
    composer.press("Enter")
    expect(page.get_by_test_id("assistant-message")).to_contain_text("Three customers.", timeout=LONG)
    wait_for_listings(1)  # the turn's end lists the files; the answer, still marked, waits

    sensitive.get_by_test_id("unmark-sensitive").click()
    expect(row.get_by_test_id("column-sensitive")).to_have_count(0)
    assert DataFile.objects.get(session=session).column_marks == {}

    route, older = held[0]
    route.fulfill(response=older)
    wait_for_listings(2)  # the older answer dropped, the files are listed again
    expect(row.get_by_test_id("column-sensitive")).to_have_count(0)
    holding = False
    route, newer = held[1]
    route.fulfill(response=newer)
    expect(row.get_by_test_id("mark-column-pick")).to_contain_text("email")
    expect(row.get_by_test_id("column-sensitive")).to_have_count(0)
