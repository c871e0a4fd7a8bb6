"""Workspaces in Chromium: alice makes one, invites by link, bob signs in through the link and
accepts, and the header's switcher shows each the workspace's sessions."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from analyst.models import AnalysisSession, Membership


def test_create_invite_accept_and_switch(stack, web, browser, alice_login, shoot):
    from playwright.sync_api import expect

    page = alice_login()
    page.get_by_test_id("workspace-switcher-current").click()
    page.get_by_test_id("workspaces-link").click()
    page.get_by_test_id("workspace-new-name").fill("Research <b>lab</b>")
    page.get_by_test_id("workspace-create").click()
    expect(page.get_by_test_id("workspace-name")).to_have_text("Research <b>lab</b>")  # as text
    page.get_by_test_id("invitation-role").select_option("editor")
    page.get_by_test_id("invitation-create").click()
    url = page.get_by_test_id("invitation-url").inner_text().strip()
    assert url.startswith(f"{web}/invitations/")
    expect(page.get_by_test_id("invitation-row")).to_have_count(1)
    shoot(page, "invited")

    get_user_model().objects.create_user("bob", password="another-long-passphrase")
    bob = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    bob.goto(url)
    bob.fill("input[name=username]", "bob")
    bob.fill("input[name=password]", "another-long-passphrase")
    bob.click("form[data-testid=login-form] button[type=submit]")
    expect(bob.get_by_test_id("invitation-offer")).to_contain_text("as editor")
    bob.get_by_test_id("invitation-accept").click()
    expect(bob.get_by_test_id("member-name")).to_have_text(["alice", "bob"])
    assert (
        Membership.objects.get(user__username="bob", workspace__name="Research <b>lab</b>").role == "editor"
    )

    bob.get_by_test_id("workspace-switcher-current").click()
    bob.get_by_test_id("switch-workspace").filter(has_text="Research").click()
    expect(bob.get_by_test_id("sessions-workspace")).to_have_text("Research <b>lab</b>")
    bob.get_by_test_id("new-session-title").fill("Shared analysis")
    bob.get_by_test_id("new-session").click()
    bob.wait_for_url(f"{web}/sessions/*/")
    assert AnalysisSession.objects.get(title="Shared analysis").workspace.name == "Research <b>lab</b>"

    page.reload()
    expect(page.get_by_test_id("member-name")).to_have_text(["alice", "bob"])
    expect(page.get_by_test_id("invitation-row")).to_have_count(0)
    page.get_by_test_id("workspace-switcher-current").click()
    page.get_by_test_id("switch-workspace").filter(has_text="Research").click()
    expect(page.get_by_test_id("workspace-switcher-current")).to_have_text("Research <b>lab</b>")
    expect(page.get_by_test_id("session-list")).to_contain_text("Shared analysis")
    shoot(page, "switched")
    page.get_by_test_id("workspace-switcher-current").click()
    page.get_by_test_id("switch-workspace").filter(has_text="Personal").click()
    expect(page.get_by_test_id("session-list")).to_have_count(0)
    bob.context.close()
