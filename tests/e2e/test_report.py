"""The HTML report in Chromium, opened from disk as a stakeholder opens it, and as a share link's
static copy: the answers with their charts (plotly ones drawn by the app's own plotly.js, inline)
and last tables; the code, failed cells, the 5,000-line print and the answer asked again folded
under <details>, one click away; and the report's own policy holds: nothing it refuses is tried."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model

from analyst.models import ShareLink
from analyst.sessions import exports
from tests.e2e.hour_long_session import hour_long_session

FIGURES = 2  # questions 2 and 9 drew a plotly figure
IMAGES = 8  # matplotlib charts: questions whose number 3 does not divide


@pytest.fixture
def session(transactional_db: None) -> Any:
    return hour_long_session(get_user_model().objects.create_user("alice"))


def opened(browser: Any, url: str) -> tuple[Any, list[str]]:
    """A page at ``url`` and the policy's complaints, as the console reports them."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    refused: list[str] = []
    page.on(
        "console",
        lambda message: refused.append(message.text) if "Content Security Policy" in message.text else None,
    )
    page.goto(url)
    return page, refused


def assert_reads_as_a_report(page: Any, refused: list[str]) -> None:
    from playwright.sync_api import expect

    expect(page.locator(".figure .main-svg").first).to_be_visible(timeout=30_000)
    expect(page.locator(".figure")).to_have_count(FIGURES)
    assert page.locator("body > .section > .shown img").count() == IMAGES
    assert [page.locator(".figure").nth(n).locator(".main-svg").count() > 0 for n in range(FIGURES)] == [
        True
    ] * FIGURES
    expect(page.locator(".question")).to_have_count(12 + 1)  # the answer asked again: folded
    expect(page.locator(".answer").first).to_contain_text("South sells most at step 0")
    assert page.locator("details[open]").count() == 0
    printed = page.get_by_text("Pandas(Index=4999, region='north')", exact=False)
    expect(printed).to_be_hidden()  # past the 1,000 lines kept, and folded anyway
    expect(page.get_by_text("Pandas(Index=999, region='north')", exact=False)).to_be_hidden()
    page.locator("details.work > summary").nth(4).click()
    expect(page.get_by_text("Pandas(Index=999, region='north')", exact=False)).to_be_visible()
    expect(page.get_by_text("and 4000 more lines")).to_be_visible()
    expect(page.locator("details.earlier")).to_have_count(1)
    page.locator("details.earlier > summary").click()
    expect(page.locator("details.earlier .answer")).to_contain_text("step 5")
    assert refused == []


def test_the_report_opened_from_disk(browser, session, tmp_path, shoot):
    report = tmp_path / "report.html"
    report.write_bytes(exports.export(session, "html").content)
    page, refused = opened(browser, report.as_uri())
    try:
        assert_reads_as_a_report(page, refused)
        shoot(page, "report")
    finally:
        page.close()


def test_the_static_copy_of_a_share_link(browser, session, web):
    link = ShareLink.objects.create(session=session)
    page, refused = opened(browser, f"{web}/s/{link.token}/static")
    try:
        assert_reads_as_a_report(page, refused)
    finally:
        page.close()


def test_the_report_on_a_phone_does_not_scroll_sideways(browser, session, tmp_path):
    report = tmp_path / "report.html"
    report.write_bytes(exports.export(session, "html").content)
    page = browser.new_page(viewport={"width": 390, "height": 844})
    try:
        page.goto(report.as_uri())
        page.locator(".figure .main-svg").first.wait_for(timeout=30_000)
        for summary in page.locator("details > summary").all():  # folded work too, once opened
            summary.click()
        width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], width
    finally:
        page.close()
