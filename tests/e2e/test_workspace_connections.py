"""A workspace's connections in Chromium: alice, an admin of Team, adds one there from the
Connections page and sees where each of hers lives; bob, an editor, sees it marked as Team's,
managed by its admins, with no Test, Edit or Delete, and no Team to add one to."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from analyst.models import Connection, Membership, Workspace
from tests.e2e.conftest import fill_login
from tests.e2e.test_connections import row_of


def test_an_admin_adds_one_to_the_workspace_and_an_editor_only_sees_it(
    stack, web, browser, alice_login, shoot
):
    from playwright.sync_api import expect

    team = Workspace.objects.create(name="Team <i>x</i>")
    alice = get_user_model().objects.get(username="alice")
    bob = get_user_model().objects.create_user("bob", password="another-long-passphrase")
    Membership.objects.create(workspace=team, user=alice, role="admin")
    Membership.objects.create(workspace=team, user=bob, role="editor")

    page = alice_login()
    page.goto(f"{web}/connections/")
    form = page.get_by_test_id("connection-form")
    expect(form.get_by_test_id("connection-workspace").locator("option")).to_have_text(
        ["Mine (personal)", "Team <i>x</i>"]
    )
    for name, workspace in [("mine", "Mine (personal)"), ("shared", "Team <i>x</i>")]:
        form.get_by_test_id("connection-name").fill(name)
        form.get_by_test_id("connection-kind").select_option("http")
        form.get_by_test_id("connection-url").fill("https://api.example.test/v1")
        form.get_by_test_id("connection-workspace").select_option(label=workspace)
        form.get_by_test_id("connection-save").click()
        expect(row_of(page, name)).to_be_visible()
    expect(row_of(page, "mine").get_by_test_id("connection-row-workspace")).to_have_text("Mine")
    expect(row_of(page, "shared").get_by_test_id("connection-row-workspace")).to_have_text("Team <i>x</i>")
    expect(row_of(page, "shared").get_by_test_id("connection-test")).to_be_visible()
    assert Connection.objects.get(name="shared").workspace == team
    assert Connection.objects.get(name="mine").workspace is None
    shoot(page, "admin")

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    other = context.new_page()
    other.goto(f"{web}/accounts/login/")
    fill_login(other, "bob", "another-long-passphrase")
    other.wait_for_url(f"{web}/sessions/")
    other.goto(f"{web}/connections/")
    shared = row_of(other, "shared")
    expect(shared.get_by_test_id("connection-row-workspace")).to_have_text("Team <i>x</i>")
    expect(shared.get_by_test_id("connection-managed-by")).to_have_text(
        "Managed by the admins of Team <i>x</i>"
    )
    expect(shared.get_by_test_id("connection-test")).to_have_count(0)
    expect(shared.get_by_test_id("connection-edit")).to_have_count(0)
    expect(row_of(other, "mine")).to_have_count(0)  # alice's own
    expect(other.get_by_test_id("connection-workspace")).to_be_hidden()  # only his own to add to
    shoot(other, "editor")
    context.close()
