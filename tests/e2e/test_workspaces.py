"""Workspaces in Chromium: alice makes one, invites by link, bob signs in through the link and
accepts, and the header's switcher shows each the workspace's sessions."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from analyst.models import AnalysisSession, Membership, Workspace
from analyst.models.workspaces import Role
from analyst.realtime import events
from tests.e2e.conftest import fill_login


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
    fill_login(bob, "bob", "another-long-passphrase")
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


def test_a_viewer_follows_a_colleagues_session_live_read_only_and_forks_it(stack, web, browser, alice_login):
    from playwright.sync_api import expect

    page = alice_login()
    alice = get_user_model().objects.get(username="alice")
    vic = get_user_model().objects.create_user("vic", password="a-viewers-passphrase")
    team = Workspace.objects.create(name="Team")
    Membership.objects.create(workspace=team, user=alice, role=Role.OWNER)
    Membership.objects.create(workspace=team, user=vic, role=Role.VIEWER)
    session = AnalysisSession.objects.create(
        owner=alice, workspace=team, model="anthropic/claude-test", title="Q3"
    )
    events.append(session.id, "stdout", {"text": "revenue 1234\n"})

    reader = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    reader.goto(f"{web}/accounts/login/?next=/sessions/{session.id}/")
    fill_login(reader, "vic", "a-viewers-passphrase")
    reader.wait_for_url(f"{web}/sessions/{session.id}/")
    expect(reader.get_by_test_id("transcript")).to_contain_text("revenue 1234")
    expect(reader.get_by_test_id("readonly-banner")).to_have_text(
        "Viewers may read this session, not change it: ask an editor or an admin of Team."
    )
    expect(reader.get_by_test_id("composer-input")).to_have_count(0)

    events.append(session.id, "stdout", {"text": "margin 56\n"})
    expect(reader.get_by_test_id("transcript")).to_contain_text("margin 56")  # live, over the WebSocket

    expect(reader.get_by_test_id("export-ipynb")).to_be_visible()  # the sidebar's tools, at this width
    expect(reader.get_by_test_id("create-share")).to_have_count(0)
    expect(reader.get_by_test_id("session-delete-open")).to_have_count(0)
    reader.get_by_test_id("session-fork").click()
    reader.wait_for_url(lambda url: str(session.id) not in url and "/sessions/" in url)
    fork = AnalysisSession.objects.exclude(id=session.id).get()
    assert (fork.owner, fork.workspace) == (vic, None)  # in vic's own space, where vic may work
    expect(reader.get_by_test_id("composer-input")).to_be_visible()
    expect(reader.get_by_test_id("transcript")).to_contain_text("revenue 1234")
    reader.context.close()
    page.context.close()
