"""Publishing a report from the session's menu, in Chromium: Publish shows the link with a Copy
button; a second, anonymous browser opens it and reads the report under the report's own policy,
with nothing refused, then the runs that update it, version by version; Unpublish kills the link."""

from __future__ import annotations

from typing import Any

import httpx
from django.contrib.auth import get_user_model

from analyst.models import AnalysisSession, Turn
from analyst.realtime import events
from tests.api.test_publishing import done_run
from tests.e2e.test_reading_a_session import pasted
from tests.e2e.test_report import opened


def analysis(owner: Any) -> AnalysisSession:
    """A session whose one cell printed a total, as a worker logs it."""
    session = AnalysisSession.objects.create(owner=owner, title="Weekly sales", model="anthropic/claude-test")
    turn = Turn.objects.create(
        session=session, requested_by=owner, kind=Turn.Kind.CELL, input="", status=Turn.Status.DONE
    )
    events.append(session.id, "cell", {"code": "print(f'total {total:,}')"}, turn=turn)
    events.append(session.id, "stdout", {"text": "total 1,234\n"}, turn=turn)
    events.append(session.id, "cell_done", {"failed": False}, turn=turn)
    return session


def test_publish_from_the_menu_and_read_it_anonymously(stack, web, browser, alice_login, shoot):
    from playwright.sync_api import expect

    page = alice_login()
    session = analysis(get_user_model().objects.get(username="alice"))
    page.context.grant_permissions(["clipboard-write"])
    page.goto(f"{web}/sessions/{session.id}/")
    panel = page.get_by_test_id("publish-panel")
    panel.get_by_test_id("publish").click()
    shown = panel.get_by_test_id("published-url")
    expect(shown).to_be_visible()
    url = shown.input_value()
    assert url.startswith(f"{web}/r/") and session.publication.token in url
    copy = panel.get_by_test_id("copy-published-url")
    copy.click()
    expect(copy).to_have_text("Copied")
    assert pasted(page) == url
    shoot(page, "published")

    report, refused = opened(browser, url)  # a context of its own: signed in as nobody
    try:
        expect(report.locator("h1")).to_have_text("Weekly sales")
        expect(report.get_by_test_id("published-version")).to_contain_text("No run of this analysis")
        report.locator("details.work > summary").first.click()
        expect(report.get_by_text("total 1,234")).to_be_visible()
        alice = session.owner
        older = done_run(session, alice, {"week": 1}, ["total 1,234\n"], minutes=1)
        done_run(session, alice, {"week": 2}, ["total 1,310\n"], minutes=2)
        report.reload()
        expect(report.get_by_test_id("published-version")).to_contain_text("with week = 2")
        expect(report.get_by_test_id("published-changes")).to_have_text("cell 1: 1,234 → 1,310")
        shoot(report, "read")
        report.get_by_test_id("published-versions").get_by_role("link").nth(1).click()  # the older one
        report.wait_for_url(f"{url}?version={older.id}")
        expect(report.get_by_test_id("published-version")).to_contain_text("with week = 1")
        assert refused == []
    finally:
        report.close()

    panel.get_by_test_id("unpublish").click()
    expect(panel.get_by_test_id("publish")).to_be_visible()
    assert httpx.get(url, timeout=10).status_code == 404
    page.reload()
    expect(page.get_by_test_id("publish-panel").get_by_test_id("publish")).to_be_visible()
