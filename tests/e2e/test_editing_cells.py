"""Edit and re-run a past cell, the model's or yours: its code comes back into the composer, runs
as a new cell in the same kernel marked as edited from the original, and the original stays."""

from __future__ import annotations

import re

from tests.e2e.test_code_editor import editor_text
from tests.fakes.model_server import anthropic_text, anthropic_tool_call


def test_a_model_cell_edited_runs_again_as_a_new_cell(stack, web, alice_login, shoot):
    from playwright.sync_api import expect

    stack.script(
        anthropic_tool_call("run_python", {"code": "rate = 0.2\nprint(round(100 * rate))"}),
        anthropic_text("A fifth of 100 is 20."),
    )
    page = alice_login()
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    page.get_by_test_id("composer-input").fill("What is a fifth of 100?")
    page.get_by_test_id("composer-input").press("Enter")
    expect(page.get_by_test_id("assistant-message").last).to_contain_text("20.", timeout=90_000)

    cells = page.get_by_test_id("code-cell")
    original = cells.first
    original.get_by_test_id("cell-edit").click()
    composer = page.get_by_test_id("composer-input")  # the code editor (test_code_editor.py)
    expect(composer).to_be_focused()
    assert editor_text(page) == "rate = 0.2\nprint(round(100 * rate))"
    expect(page.get_by_test_id("composer-editing")).to_be_visible()
    composer.fill("rate = 0.25\nprint(round(100 * rate))")
    composer.press("Control+Enter")

    expect(cells).to_have_count(2, timeout=60_000)
    edited = cells.nth(1)
    expect(edited.get_by_test_id("cell-output")).to_have_text("25", timeout=60_000)
    expect(edited.get_by_test_id("cell-edited")).to_have_attribute("href", f"#{original.get_attribute('id')}")
    expect(original.get_by_test_id("cell-output")).to_have_text("20")  # the original stays as it was
    expect(page.get_by_test_id("composer-editing")).to_be_hidden()
    shoot(page, "edited")

    # Your own cell too; and Cancel puts the composer back as it was.
    edited.get_by_test_id("cell-edit").click()
    expect(composer).to_be_focused()
    assert editor_text(page) == "rate = 0.25\nprint(round(100 * rate))"
    page.get_by_test_id("composer-editing").get_by_role("button", name="Cancel").click()
    expect(page.locator(".code-editor .cm-placeholder")).to_be_visible()  # emptied
    expect(page.get_by_test_id("composer-editing")).to_be_hidden()
