"""The transcript keeps its noise down, on a desktop and on a phone: a model cell's printout
folds past a few lines, file notes in a row make one line, and an output shown whole ("Show all
N lines") folds back with "Show less"."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from analyst.models import AnalysisSession
from tests.e2e.test_page_widths import DESKTOP, PHONE, logged_in, web_without_worker, write


@pytest.fixture(scope="module")
def noise_web(django_db_setup: None) -> Iterator[str]:
    with web_without_worker("e2e-transcript-noise") as url:
        yield url


VIEWPORTS = pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
INFO = "".join(f" {n:>2}  column_{n:<10} 1000 non-null  int64\n" for n in range(30))


def session_of(written: list[tuple[str, dict[str, Any]]]) -> tuple[Any, AnalysisSession]:
    user = get_user_model().objects.create_user("alice")
    session = AnalysisSession.objects.create(owner=user, model="anthropic/claude-sonnet-4-5", title="Noise")
    write(session, [(kind, payload, None) for kind, payload in written])
    return user, session


def opened(browser: Any, web: str, user: Any, session: AnalysisSession, viewport: dict[str, int]) -> Any:
    from playwright.sync_api import expect

    page = logged_in(browser, web, user, viewport).new_page()
    page.goto(f"{web}/sessions/{session.id}/")
    expect(page.get_by_test_id("code-cell").first).to_be_visible()
    return page


def cut(pre: Any) -> bool:
    return pre.evaluate("e => e.scrollHeight > e.clientHeight + 1")


@VIEWPORTS
def test_a_model_cells_long_printout_folds_and_opens(transactional_db, noise_web, browser, viewport):
    from playwright.sync_api import expect

    tool = {"tool_call_id": "toolu_1"}
    user, session = session_of(
        [
            ("tool_call", {"id": "toolu_1", "name": "run_python", "code": "frame.info()"}),
            ("stdout", {"text": INFO, **tool}),
            ("cell_done", {"failed": False, **tool}),
            ("cell", {"code": "print(open('data/a.csv').read())"}),
            ("stdout", {"text": INFO}),
            ("cell_done", {"failed": False}),
        ]
    )
    page = opened(browser, noise_web, user, session, viewport)
    model, own = page.get_by_test_id("code-cell").nth(0), page.get_by_test_id("code-cell").nth(1)
    printout = model.locator("pre.stream")
    expect(printout).to_contain_text("column_29")  # all of it is there, folded
    assert cut(printout)
    toggle = model.get_by_test_id("output-toggle")
    expect(toggle).to_have_text("Show all output")
    toggle.click()
    assert not cut(printout)
    expect(toggle).to_have_text("Show less")
    toggle.click()
    assert cut(printout)
    assert not cut(own.locator("pre.stream"))  # the user's own cell stays open
    expect(own.get_by_test_id("output-toggle")).to_have_count(0)
    page.context.close()


@VIEWPORTS
def test_file_notes_in_a_row_make_one_line(transactional_db, noise_web, browser, viewport):
    from playwright.sync_api import expect

    added = [
        {"id": n, "name": f"t{n}.csv", "path": f"data/t{n}.csv", "rows": 3, "columns": 2} for n in range(5)
    ]
    user, session = session_of(
        [
            *[("file_added", payload) for payload in added],
            *[("file_added", payload) for payload in added[:3]],  # read again, corrected
            *[("file_removed", {"path": payload["path"]}) for payload in added[3:]],
            ("cell", {"code": "1 + 1"}),
            ("cell_done", {"failed": False}),
            ("file_added", {"id": 9, "name": "late.csv", "path": "data/late.csv", "rows": 1, "columns": 1}),
        ]
    )
    page = opened(browser, noise_web, user, session, viewport)
    groups = page.get_by_test_id("file-notes")
    expect(groups).to_have_count(1)  # the late upload, after a cell, stands alone
    summary = groups.get_by_test_id("file-notes-summary")
    expect(summary).to_have_text(
        "Files: uploaded data/t0.csv, data/t1.csv, data/t2.csv, data/t3.csv, data/t4.csv"
        " · read again data/t0.csv, data/t1.csv, data/t2.csv · deleted data/t3.csv, data/t4.csv"
    )
    assert summary.evaluate("e => e.getClientRects().length") == 1
    expect(groups.get_by_test_id("file-added").first).to_be_hidden()
    groups.get_by_test_id("file-notes-toggle").click()
    expect(groups.get_by_test_id("file-added")).to_have_count(8)
    expect(groups.get_by_test_id("file-added").nth(5)).to_have_text(
        "Read again data/t0.csv (3 rows × 2 columns)"
    )
    expect(groups.get_by_test_id("file-removed").last).to_be_visible()
    expect(page.get_by_test_id("file-added").last).to_have_text("Uploaded data/late.csv (1 row × 1 column)")
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    page.context.close()


@VIEWPORTS
def test_an_output_shown_whole_folds_back(transactional_db, noise_web, browser, viewport):
    from playwright.sync_api import expect

    text = "".join(f"line {n}\n" for n in range(400))
    user, session = session_of(
        [("cell", {"code": "for n in range(400): print('line', n)"}), ("stdout", {"text": text})]
    )
    page = opened(browser, noise_web, user, session, viewport)
    cell = page.get_by_test_id("code-cell")
    cell.get_by_test_id("show-all").click()
    less = cell.get_by_test_id("show-less")
    expect(less).to_have_text("Show less")
    printout = cell.locator("pre.stream")
    expect(printout).to_contain_text("line 399")
    assert not cut(printout)
    less.click()
    assert cut(printout)
    expect(less).to_have_text("Show all 400 lines")
    expect(less).to_be_in_viewport()
    less.click()
    assert not cut(printout)
    page.context.close()
