"""Cells a person approves, through the page: the setting in the sidebar; a waiting cell shown in
full with Run, Edit and Reject; Run runs it, Reject (with a reason) tells the model; the buttons go
once decided, and a reload shows the same outcome."""

from __future__ import annotations

import re

from analyst.models import AnalysisSession
from tests.fakes.model_server import anthropic_text, anthropic_tool_call


def test_run_and_reject_from_the_page(stack, web, alice_login, shoot):
    from playwright.sync_api import expect

    stack.script(
        anthropic_tool_call("run_python", {"code": "answer = 6 * 7\nprint(answer)"}, tool_id="toolu_01"),
        anthropic_tool_call(
            "run_python", {"code": "import os\nos.remove('data/notes.txt')"}, tool_id="toolu_02"
        ),
        anthropic_text("I left the file alone."),
    )
    page = alice_login()
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    session_id = page.url.rstrip("/").rsplit("/", 1)[-1]
    setting = page.get_by_test_id("approve-cells")
    if not setting.is_visible():  # the sidebar behind its button on a narrow page
        page.get_by_test_id("session-tools-open").click()
    setting.select_option("all")
    expect(setting).to_have_value("all")
    for _ in range(50):  # the PATCH is on its way
        if AnalysisSession.objects.get(id=session_id).approve_cells == "all":
            break
        page.wait_for_timeout(100)
    assert AnalysisSession.objects.get(id=session_id).approve_cells == "all"
    page.keyboard.press("Escape")

    composer = page.get_by_test_id("composer-input")
    composer.fill("What is the answer, and tidy up")
    composer.press("Enter")
    first = page.get_by_test_id("pending-cell").first
    expect(first.get_by_test_id("pending-code")).to_contain_text("answer = 6 * 7", timeout=90_000)
    expect(page.get_by_test_id("code-cell")).to_have_count(0)  # nothing ran yet
    expect(first.get_by_test_id("pending-reason")).to_be_hidden()  # until Reject is clicked
    expect(first.get_by_test_id("pending-editor")).to_be_hidden()  # until Edit is
    shoot(page, "waiting")

    first.get_by_test_id("pending-run").click()
    expect(first.get_by_test_id("pending-outcome")).to_have_text("Approved: it ran below.", timeout=30_000)
    expect(first.get_by_test_id("pending-run")).to_have_count(0)
    expect(page.get_by_test_id("cell-output").first).to_have_text("42", timeout=60_000)

    second = page.get_by_test_id("pending-cell").nth(1)
    expect(second.get_by_test_id("pending-code")).to_contain_text("os.remove", timeout=60_000)
    second.get_by_test_id("pending-reject").click()
    expect(second.get_by_test_id("pending-run")).to_be_hidden()
    second.get_by_test_id("pending-reason").fill("keep my notes")
    second.get_by_test_id("pending-reject-confirm").click()
    expect(second.get_by_test_id("pending-outcome")).to_have_text("Rejected: keep my notes", timeout=30_000)
    expect(page.get_by_test_id("assistant-message").last).to_contain_text(
        "I left the file alone.", timeout=60_000
    )
    expect(page.get_by_test_id("pending-actions")).to_have_count(0)
    blocks = [b for m in stack.requests[-1].json["messages"] for b in m["content"] if isinstance(b, dict)]
    (rejected,) = [b for b in blocks if b["type"] == "tool_result" and b["tool_use_id"] == "toolu_02"]
    assert rejected["content"][0]["text"] == "The user rejected this cell: keep my notes It did not run."
    shoot(page, "decided")

    page.reload()  # rebuilt from the log: the same outcomes, no buttons
    expect(page.get_by_test_id("pending-outcome")).to_have_text(
        ["Approved: it ran below.", "Rejected: keep my notes"], timeout=30_000
    )
    expect(page.get_by_test_id("pending-actions")).to_have_count(0)
    expect(page.get_by_test_id("approve-cells")).to_have_value("all")
