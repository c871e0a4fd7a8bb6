"""Run again on another file from the page: a file missing columns is refused in the dialog with
the columns named; a file with the same columns opens a new session whose cells show its numbers."""

from __future__ import annotations

from analyst.models import AnalysisSession
from tests.e2e.test_restart_and_run_all import run
from tests.e2e.test_uploads import file_row, open_session, ready

SALES = b"region,amount\nnorth,10\nsouth,32\neast,7\n"
MARCH = b"region,amount\nnorth,100\nsouth,320\neast,70\nwest,5\n"
OTHER = b"region,total\nnorth,1\n"


def test_a_mismatch_is_said_and_the_same_columns_run_again(stack, web, alice_login, shoot, tmp_path):
    from playwright.sync_api import expect

    page = alice_login()
    source = open_session(page)
    for name, content in (("sales.csv", SALES), ("march.csv", MARCH), ("other.csv", OTHER)):
        (tmp_path / name).write_bytes(content)
    page.get_by_test_id("upload-input").set_input_files(str(tmp_path / "sales.csv"))
    ready(file_row(page, "sales.csv"))
    page.get_by_test_id("mode-toggle").click()
    run(page, "import pandas as pd\nsales = pd.read_csv('data/sales.csv')", 1)
    run(page, "print('total', int(sales.amount.sum()))", 2)

    page.get_by_test_id("rerun-open").click()
    dialog = page.get_by_test_id("rerun-dialog")
    expect(dialog.get_by_test_id("rerun-replace")).to_contain_text("sales.csv")
    dialog.get_by_test_id("rerun-upload").set_input_files(str(tmp_path / "other.csv"))
    dialog.get_by_test_id("rerun-run").click()
    message = dialog.get_by_test_id("rerun-message")
    expect(message).to_have_text(
        "other.csv lacks columns that sales.csv has: amount (it has others: total). Nothing was run.",
        timeout=90_000,
    )
    shoot(page, "refused")
    assert AnalysisSession.objects.count() == 1

    dialog.get_by_test_id("rerun-upload").set_input_files(str(tmp_path / "march.csv"))
    dialog.get_by_test_id("rerun-run").click()
    page.wait_for_url(lambda url: str(source.id) not in url, timeout=90_000)
    expect(page.locator(".session-title")).to_have_text("Untitled analysis — on march.csv")
    cells = page.get_by_test_id("code-cell")
    expect(cells).to_have_count(2, timeout=90_000)
    expect(cells.nth(1).get_by_test_id("cell-output")).to_have_text("total 495", timeout=90_000)
    expect(page.get_by_test_id("notice").filter(has_text="All 2 cells ran.")).to_have_count(1, timeout=60_000)
    expect(page.get_by_test_id("notice").first).to_contain_text("it is in this sandbox as data/sales.csv")
    shoot(page, "replayed")
