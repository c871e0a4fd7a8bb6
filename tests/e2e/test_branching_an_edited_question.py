"""Edit a past question: it comes back into the composer, and sending it makes a branch, a new
session the page goes to, which says where it came from (a link back to the question) and whose
kernel is as it was before that question; the original links to the branch at that question."""

from __future__ import annotations

import re

from tests.fakes.model_server import anthropic_text, anthropic_tool_call


def test_an_edited_question_branches_into_a_new_session(stack, web, alice_login, shoot):
    from playwright.sync_api import expect

    stack.script(
        anthropic_tool_call("run_python", {"code": "base = 10"}, tool_id="toolu_01"),
        anthropic_text("Base is ten."),
        anthropic_tool_call("run_python", {"code": "rate = 0.2"}, tool_id="toolu_02"),
        anthropic_text("Rate is a fifth."),
        anthropic_tool_call("run_python", {"code": "print(base, 'rate' in dir())"}, tool_id="toolu_03"),
        anthropic_text("Base is here, no rate yet."),
    )
    page = alice_login()
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    original_url = page.url
    composer = page.get_by_test_id("composer-input")
    composer.fill("Set the base")
    composer.press("Enter")
    expect(page.get_by_test_id("assistant-message").last).to_contain_text("Base is ten.", timeout=90_000)
    expect(page.get_by_test_id("running-status")).to_be_hidden(timeout=60_000)
    composer.fill("Set the rate")
    composer.press("Enter")
    expect(page.get_by_test_id("assistant-message").last).to_contain_text("Rate is a fifth.", timeout=90_000)
    expect(page.get_by_test_id("running-status")).to_be_hidden(timeout=60_000)

    questions = page.get_by_test_id("user-message")
    questions.nth(1).get_by_test_id("question-edit").click()
    expect(composer).to_have_value("Set the rate")
    expect(page.get_by_test_id("composer-editing")).to_contain_text("makes a branch")
    shoot(page, "editing")
    composer.fill("Check the base instead")
    composer.press("Enter")

    page.wait_for_url(
        lambda url: url != original_url and re.search(r"/sessions/[0-9a-f-]{36}/$", url), timeout=30_000
    )
    expect(page.get_by_test_id("assistant-message").last).to_contain_text("no rate yet", timeout=90_000)
    expect(page.get_by_test_id("cell-output").last).to_have_text("10 False")
    expect(page.get_by_test_id("user-message")).to_have_count(2)
    expect(page.get_by_text("Set the rate")).to_have_count(0)
    origin = page.get_by_test_id("branch-origin")
    expect(origin).to_be_visible()
    expect(page.locator(".notice[data-type=forked]")).to_contain_text("Branched from")
    shoot(page, "branch")

    origin.click()
    page.wait_for_url(re.compile(re.escape(original_url) + r"#msg-\d+$"))
    link = page.get_by_test_id("user-message").nth(1).get_by_test_id("branch-link")
    expect(link).to_contain_text("branched: ")
    expect(page.get_by_test_id("user-message")).to_have_count(2)
    shoot(page, "original")


def test_a_question_whose_state_was_pruned_branches_into_an_empty_kernel(stack, web, alice_login, shoot):
    from playwright.sync_api import expect

    from analyst.models import KernelSnapshot

    stack.script(
        anthropic_tool_call("run_python", {"code": "base = 10"}, tool_id="toolu_01"),
        anthropic_text("Base is ten."),
        anthropic_text("Ten it is."),
        anthropic_tool_call("run_python", {"code": "print('base' in dir())"}, tool_id="toolu_02"),
        anthropic_text("Nothing is set here."),
    )
    page = alice_login()
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    original_url = page.url
    composer = page.get_by_test_id("composer-input")
    for question, answer in (("Set the base", "Base is ten."), ("Say it", "Ten it is.")):
        composer.fill(question)
        composer.press("Enter")
        expect(page.get_by_test_id("assistant-message").last).to_contain_text(answer, timeout=90_000)
        expect(page.get_by_test_id("running-status")).to_be_hidden(timeout=60_000)
    KernelSnapshot.objects.all().delete()  # as pruning past ANALYST_SNAPSHOTS_KEPT does

    page.get_by_test_id("user-message").nth(1).get_by_test_id("question-edit").click()
    composer.fill("Say it again")
    composer.press("Enter")
    note = page.get_by_test_id("composer-editing")
    expect(note).to_contain_text("no longer kept", timeout=30_000)
    offer = page.get_by_test_id("branch-empty-kernel")
    expect(offer).to_be_visible()
    assert page.url == original_url
    shoot(page, "offered")

    offer.click()
    page.wait_for_url(lambda url: url != original_url, timeout=30_000)
    expect(page.locator(".notice[data-type=forked]")).to_contain_text("empty kernel")
    expect(page.get_by_test_id("cell-output").last).to_have_text("False", timeout=90_000)
    shoot(page, "branch")
