"""Regenerate the last answer from the page: the button under it asks the same question again, the
earlier answer folds away (a click shows it, dimmed), and the new one starts from the kernel as it
was before the question."""

from __future__ import annotations

import re

from tests.fakes.model_server import anthropic_text, anthropic_tool_call


def test_the_last_answer_is_regenerated(stack, web, alice_login, shoot):
    from playwright.sync_api import expect

    stack.script(
        anthropic_tool_call("run_python", {"code": "tries = 1\nprint(tries)"}, tool_id="toolu_01"),
        anthropic_text("The first try."),
        anthropic_tool_call(
            "run_python", {"code": "tries = globals().get('tries', 0) + 1\nprint(tries)"}, tool_id="toolu_02"
        ),
        anthropic_text("The second try."),
    )
    page = alice_login()
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    composer = page.get_by_test_id("composer-input")
    composer.fill("How many tries?")
    composer.press("Enter")
    answers = page.get_by_test_id("assistant-message")
    expect(answers.last).to_contain_text("The first try.", timeout=90_000)
    regenerate = page.get_by_test_id("regenerate")
    expect(regenerate).to_be_visible(timeout=30_000)
    shoot(page, "before")

    regenerate.click()
    expect(page.get_by_test_id("assistant-message").filter(has_text="The second try.")).to_be_visible(
        timeout=90_000
    )
    # The earlier answer is folded away; the new one ran in the kernel from before the question.
    expect(page.get_by_test_id("superseded")).to_be_visible()
    expect(page.get_by_text("The first try.")).to_be_hidden()
    expect(page.get_by_test_id("regenerated")).to_have_text("asked again")
    visible_outputs = page.locator("[data-testid=code-cell]:not(.superseded) [data-testid=cell-output]")
    expect(visible_outputs).to_have_text(["1"], timeout=60_000)
    expect(page.get_by_test_id("regenerate")).to_have_count(1, timeout=30_000)
    shoot(page, "regenerated")

    page.get_by_test_id("superseded-toggle").click()
    expect(page.get_by_text("The first try.")).to_be_visible()
    shoot(page, "earlier-shown")

    page.reload()  # read back from the log, the same
    expect(page.get_by_test_id("superseded")).to_be_visible(timeout=30_000)
    expect(page.get_by_text("The first try.")).to_be_hidden()
    expect(page.get_by_test_id("regenerate")).to_have_count(1, timeout=30_000)
