"""The report of an hour-long session (2,000 events) is at most a tenth of the height of the
transcript dump it was before (report_before.py, kept frozen), for the same session, measured in
Chromium as document.documentElement.scrollHeight; both figures are printed."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from analyst.sessions import exports
from analyst.sessions.exports import transcript
from tests.e2e import report_before
from tests.e2e.hour_long_session import hour_long_session

AT_MOST = 0.10


def height(browser, path) -> int:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        page.locator(".figure .main-svg").first.wait_for(timeout=30_000)  # a drawn chart has its height
        return page.evaluate("document.documentElement.scrollHeight")
    finally:
        page.close()


def test_the_report_is_a_tenth_of_the_transcript_dump(browser, transactional_db, tmp_path):
    session = hour_long_session(get_user_model().objects.create_user("alice"))
    before, after = tmp_path / "before.html", tmp_path / "after.html"
    before.write_text(report_before.report(session.title, transcript.read(session), "Exported."))
    after.write_bytes(exports.export(session, "html").content)
    page = browser.new_page()
    page.goto(before.as_uri())
    was = page.evaluate("document.documentElement.scrollHeight")
    page.close()
    now = height(browser, after)
    print(f"\nreport of 2,000 events: {now:,} px; the transcript dump before: {was:,} px ({now / was:.1%})")
    assert now <= AT_MOST * was, (now, was)
