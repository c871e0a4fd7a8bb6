"""Instructions and a data dictionary that stick, as a user meets them in Chromium: instructions
saved on their page from the menu, a column described in the files panel, both still there after
a reload."""

from __future__ import annotations

from analyst.models import AnalysisSession, DataFile, SavedInstructions
from tests.e2e.test_uploads import file_row, open_session, ready

INSTRUCTIONS = "Our fiscal year starts on 1 April.\nReport amounts in EUR."
AMOUNT = "net revenue in EUR, before VAT"


def test_instructions_are_saved_on_their_page(stack, web, shoot, alice_login):
    from playwright.sync_api import expect

    page = alice_login()
    page.get_by_test_id("instructions-link").click()
    page.wait_for_url(f"{web}/settings/instructions/")
    page.get_by_test_id("instructions-text").fill(INSTRUCTIONS)
    page.get_by_test_id("instructions-save").click()
    expect(page.locator(".messages")).to_contain_text("Saved")
    shoot(page, "saved")
    assert SavedInstructions.objects.get(user__username="alice").text == INSTRUCTIONS

    page.reload()
    expect(page.get_by_test_id("instructions-text")).to_have_value(INSTRUCTIONS)
    expect(page.locator(".messages")).to_have_count(0)

    page.get_by_test_id("instructions-text").fill("x" * 4001)  # past maxlength: the box cuts it
    expect(page.get_by_test_id("instructions-text")).to_have_value("x" * 4000)


def test_a_column_is_described_in_the_files_panel(stack, web, shoot, alice_login, tmp_path):
    from playwright.sync_api import expect

    page = alice_login()
    session = open_session(page)
    sales = tmp_path / "sales.csv"
    sales.write_bytes(b"region,amount\nnorth,10.5\nsouth,32.25\n")
    page.get_by_test_id("upload-input").set_input_files(str(sales))
    row = ready(file_row(page, "sales.csv"))

    row.get_by_test_id("file-describe-toggle").click()
    form = row.get_by_test_id("file-dictionary")
    form.get_by_test_id("dictionary-file").fill("Shop sales, one row per region.")
    form.locator("[data-testid=dictionary-column][data-column=amount]").fill(AMOUNT)
    form.get_by_test_id("dictionary-save").click()
    expect(row.get_by_test_id("dictionary-status")).to_have_text("Saved")
    shoot(page, "described")
    assert DataFile.objects.get(session=session).dictionary == {
        "file": "Shop sales, one row per region.",
        "tables": {"": {"columns": {"amount": AMOUNT}}},
    }

    page.reload()
    row = ready(file_row(page, "sales.csv"))
    row.get_by_test_id("file-describe-toggle").click()
    form = row.get_by_test_id("file-dictionary")
    expect(form.locator("[data-testid=dictionary-column][data-column=amount]")).to_have_value(AMOUNT)
    expect(form.locator("[data-testid=dictionary-column][data-column=region]")).to_have_value("")
    expect(form.get_by_test_id("dictionary-file")).to_have_value("Shop sales, one row per region.")

    # A description past the limit is refused by the box itself; the server's reason shows otherwise.
    form.locator("[data-testid=dictionary-column][data-column=region]").evaluate(
        "input => input.removeAttribute('maxlength')"
    )
    form.locator("[data-testid=dictionary-column][data-column=region]").fill("y" * 1001)
    form.get_by_test_id("dictionary-save").click()
    expect(form.get_by_test_id("dictionary-error")).to_contain_text("at most 1,000 are allowed")
    assert AnalysisSession.objects.get(id=session.id).files.get().dictionary["tables"][""]["columns"] == {
        "amount": AMOUNT
    }
