"""Waiting on the model, as a user sees it: a model that fails before answering is retried with
the status saying so ("Waiting for the model (retry 1 of 3)…"), and a chat turn that ran code
shows "Saving the kernel…" while its snapshot is taken."""

from __future__ import annotations

import re

from analyst.models import AnalysisSession
from tests.fakes.model_server import anthropic_error, anthropic_text, anthropic_tool_call

# Every phase the status bar shows, in order (a save can be over between two polls of a test).
RECORD_PHASES = """() => {
  const status = document.querySelector("[data-testid=running-status]");
  window.phasesSeen = [];
  new MutationObserver(() => {
    const phase = status.dataset.phase;
    if (phase && window.phasesSeen.at(-1) !== phase) window.phasesSeen.push(phase);
  }).observe(status, { attributes: true, attributeFilter: ["data-phase"] });
}"""


def open_session(page) -> AnalysisSession:
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    return AnalysisSession.objects.get(owner__username="alice")


def test_a_retried_model_shows_the_wait_and_then_the_saving(stack, web, shoot, alice_login):
    from playwright.sync_api import expect

    # Anthropic's overloaded answer asking for 3 s; then the model runs a cell that leaves a
    # large array (its snapshot takes a moment) and answers.
    busy = anthropic_error(529, "overloaded_error", "Overloaded", headers={"retry-after": "3"})
    cell = anthropic_tool_call("run_python", {"code": "big = np.ones(30_000_000)\nbig.size"})
    stack.script(busy, cell, anthropic_text("It holds 30 million ones."))
    page = alice_login()
    open_session(page)
    status = page.get_by_test_id("running-status")
    page.evaluate(RECORD_PHASES)
    composer = page.get_by_test_id("composer-input")
    composer.fill("How many?")
    composer.press("Enter")

    expect(status).to_have_text("Waiting for the model (retry 1 of 3)…", timeout=30_000)
    expect(status).to_have_attribute("data-phase", "retrying")
    shoot(page, "retrying")
    expect(page.get_by_test_id("assistant-message")).to_contain_text("30 million", timeout=60_000)
    expect(status).to_be_hidden(timeout=60_000)
    phases = page.evaluate("window.phasesSeen")
    assert phases[: phases.index("retrying") + 1] == ["queued", "thinking", "retrying"], phases
    assert "saving" in phases[phases.index("cell") :], f"the chat turn's save was shown: {phases}"
