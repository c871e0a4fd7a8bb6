"""Two members on one session in two browsers: each sees the other present; olga's slow cell runs
while eve's question waits in line, and both pages say whose turn it is; eve's comment on olga's
cell appears on olga's page at once, as text, with a notification behind the bell."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model

from analyst.models import AnalysisSession, Membership, Workspace
from analyst.models.workspaces import Role
from tests.fakes.model_server import anthropic_text

# Long enough to be running while eve asks; Stop ends it (its turn, not eve's waiting one).
SLOW_CELL = "import time\nprint('started', flush=True)\ntime.sleep(600)"
HOSTILE = "<img src=x onerror=window.pwned=1> why so slow?"
LONG = 60_000


def sign_in(browser: Any, web: str, name: str, session: AnalysisSession) -> Any:
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(f"{web}/accounts/login/?next=/sessions/{session.id}/")
    page.fill("input[name=username]", name)
    page.fill("input[name=password]", f"{name}-long-passphrase")
    page.click("form[data-testid=login-form] button[type=submit]")
    page.wait_for_url(f"{web}/sessions/{session.id}/")
    page.locator("form.composer[data-editor=codemirror]").wait_for(timeout=LONG)
    return page


def test_presence_whose_turn_and_a_comment_across_two_browsers(stack, web, browser, shoot):
    from playwright.sync_api import expect

    users = get_user_model().objects
    olga_user = users.create_user("olga", password="olga-long-passphrase")
    eve_user = users.create_user("eve", password="eve-long-passphrase")
    team = Workspace.objects.create(name="Team")
    Membership.objects.create(workspace=team, user=olga_user, role=Role.OWNER)
    Membership.objects.create(workspace=team, user=eve_user, role=Role.EDITOR)
    session = AnalysisSession.objects.create(
        owner=olga_user, workspace=team, model="anthropic/claude-test", title="Q3"
    )
    stack.script(anthropic_text("Eve, the answer is 42."))

    olga = sign_in(browser, web, "olga", session)
    eve = sign_in(browser, web, "eve", session)
    # Presence: each sees the other (and themself as "you").
    expect(olga.get_by_test_id("presence-name")).to_have_text(["eve", "you"])
    expect(eve.get_by_test_id("presence-name")).to_have_text(["olga", "you"])

    # Olga's slow cell runs; eve's question waits in line behind it.
    olga.get_by_test_id("mode-toggle").click()
    olga.get_by_test_id("composer-input").fill(SLOW_CELL)
    olga.get_by_test_id("composer-input").press("Control+Enter")
    expect(eve.get_by_test_id("cell-output")).to_contain_text("started", timeout=LONG)
    expect(eve.get_by_test_id("cell-author")).to_have_text("run by olga")
    expect(eve.get_by_test_id("turn-queue")).to_have_text("olga's cell is running.")
    eve.get_by_test_id("composer-input").fill("What is the answer?")
    expect(eve.get_by_test_id("send")).to_be_enabled()
    eve.get_by_test_id("send").click()
    expect(eve.get_by_test_id("turn-queue")).to_have_text("olga's cell is running; yours is next.")
    expect(olga.get_by_test_id("turn-queue")).to_have_text("Your cell is running; eve's is next.")
    expect(olga.get_by_test_id("asked-by")).to_have_text("asked by eve")
    expect(olga.get_by_test_id("cell-author")).to_have_text("your cell")
    shoot(olga, "queue-owner")
    shoot(eve, "queue-editor")

    # Olga stops her cell: eve's question runs next and is answered on both pages.
    olga.get_by_test_id("stop").click()
    for page in (olga, eve):
        expect(page.get_by_test_id("assistant-message")).to_contain_text("the answer is 42", timeout=LONG)
        expect(page.get_by_test_id("turn-queue")).to_be_hidden()
    expect(eve.get_by_test_id("user-message").get_by_test_id("asked-by")).to_have_count(0)  # her own

    # Eve comments on olga's cell: olga's page shows it at once, as text, and her bell counts it.
    expect(olga.get_by_test_id("bell-count")).to_be_hidden()
    cell = eve.get_by_test_id("code-cell")
    cell.get_by_test_id("comment-open").click()
    cell.get_by_test_id("comment-input").fill(HOSTILE)
    cell.get_by_test_id("comment-send").click()
    expect(cell.get_by_test_id("comment-text")).to_have_text(HOSTILE)
    theirs = olga.get_by_test_id("code-cell").get_by_test_id("comment")
    expect(theirs.get_by_test_id("comment-author")).to_have_text("eve")
    expect(theirs.get_by_test_id("comment-text")).to_have_text(HOSTILE)
    expect(olga.get_by_test_id("bell-count")).to_have_text("1")
    assert olga.evaluate("window.pwned") is None
    assert olga.get_by_test_id("transcript").locator("img[onerror]").count() == 0
    shoot(olga, "commented")

    olga.get_by_test_id("bell").click()
    notification = olga.get_by_test_id("notification")
    expect(notification).to_have_text(f"eve commented on “Q3”: {HOSTILE}")
    notification.click()
    expect(olga.get_by_test_id("bell-count")).to_be_hidden()
    assert olga.url.endswith(f"/sessions/{session.id}/#comment-{theirs.get_attribute('id').split('-')[1]}")
    expect(eve.get_by_test_id("bell-count")).to_be_hidden()  # her own comment tells her nothing

    eve.context.close()
    expect(olga.get_by_test_id("presence")).to_be_hidden()  # eve left: olga is alone
    olga.context.close()
