"""Figures traced on the page: a figure an output holds links to that output (a click scrolls to
it and highlights it), one the model invented is marked "not found in any output", the
[[cell N]] marker shows as a small link to its cell, and the answer counts its figures. An answer
stored before figures were traced still reads, markers hidden."""

from __future__ import annotations

import re

from analyst.models import AnalysisSession
from analyst.realtime import events
from tests.fakes.model_server import anthropic_text, anthropic_tool_call

# The figure, then a chart: it is out of sight by the time the answer is read.
CODE = "print('revenue:', 1234.4)\nplt.plot([1, 3, 2])\nplt.show()"
IN_VIEW = """(selector) => {
  const box = document.querySelector(selector)?.getBoundingClientRect();
  return box && box.top >= 0 && box.bottom <= innerHeight;
}"""
ANSWER = "Revenue was **1,234** [[cell 1]], and churn was 17.5%."


def test_figures_link_to_their_outputs_and_invented_ones_are_marked(stack, web, alice_login, shoot):
    from playwright.sync_api import expect

    stack.script(anthropic_tool_call("run_python", {"code": CODE}), anthropic_text(ANSWER))
    page = alice_login()
    page.set_viewport_size({"width": 1280, "height": 500})
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    composer = page.get_by_test_id("composer-input")
    composer.fill("Revenue and churn?")
    composer.press("Enter")
    answer = page.get_by_test_id("assistant-message").last
    expect(answer.get_by_test_id("figures-traced")).to_have_text("2 figures, 1 traced", timeout=90_000)
    for _ in range(2):  # live, then read back from the log
        traced = answer.get_by_test_id("figure-traced")
        untraced = answer.get_by_test_id("figure-untraced")
        expect(traced).to_have_text("1,234")
        expect(untraced).to_have_text("17.5%")
        expect(untraced).to_have_attribute("title", "17.5%: not found in any output")
        expect(answer).not_to_contain_text("[[")
        expect(answer.get_by_test_id("cell-cite")).to_have_text("cell 1")
        expect(page.get_by_test_id("cell-number")).to_have_text("cell 1")
        output = page.locator("pre.stream", has_text="revenue: 1234.4")
        expect(output).not_to_be_in_viewport()
        traced.click()
        expect(output).to_have_class(re.compile(r"\bflash\b"))
        page.wait_for_function(IN_VIEW, arg="pre.stream.flash")  # scrolled there (smoothly)
        shoot(page, "traced")
        answer.scroll_into_view_if_needed()
        answer.get_by_test_id("cell-cite").click()
        expect(page.locator("[data-testid=code-cell][data-cell='1']")).to_have_class(re.compile(r"\bflash\b"))
        page.reload()
        answer = page.get_by_test_id("assistant-message").last
        expect(answer.get_by_test_id("figures-traced")).to_have_text("2 figures, 1 traced", timeout=30_000)


def test_an_answer_stored_before_tracing_still_reads(stack, web, alice_login):
    from playwright.sync_api import expect

    page = alice_login()
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    session = AnalysisSession.objects.get(id=page.url.rstrip("/").split("/")[-1])
    events.append(session.id, "assistant_message", {"text": "It was 1,234 [[cell 1]]."})
    page.reload()
    answer = page.get_by_test_id("assistant-message")
    expect(answer).to_contain_text("It was 1,234", timeout=30_000)
    expect(answer).not_to_contain_text("[[")
    expect(answer.get_by_test_id("figures-traced")).to_have_count(0)
    expect(answer.get_by_test_id("figure-untraced")).to_have_count(0)


def test_a_turn_counts_the_figures_of_all_its_answers_once(stack, web, alice_login):
    """A turn that answers before its cell and after it: one count, under its last answer."""
    from playwright.sync_api import expect

    before = "The file has 42 rows; let me sum them."
    stack.script(
        anthropic_tool_call("run_python", {"code": "print(42, 1234.4)"}, text_before=before),
        anthropic_text("The total is 1,234 [[cell 1]], not 99."),
    )
    page = alice_login()
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    composer = page.get_by_test_id("composer-input")
    composer.fill("The total?")
    composer.press("Enter")
    answers = page.get_by_test_id("assistant-message")
    for _ in range(2):  # live, then read back from the log
        expect(answers).to_have_count(2, timeout=90_000)
        expect(page.get_by_test_id("figures-traced")).to_have_count(1)
        # 42 was said before any output held it, 99 is in none: only 1,234 is traced.
        expect(answers.last.get_by_test_id("figures-traced")).to_have_text("3 figures, 1 traced")
        page.reload()
