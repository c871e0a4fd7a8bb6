"""The turn's edges, as a user meets them: a question asked while the kernel saves, a kernel
that dies in a cell, and a model that cannot answer here."""

from __future__ import annotations

import re

from analyst.models import AnalysisSession, Turn
from tests.e2e.conftest import SILENT_OLLAMA
from tests.fakes.model_server import anthropic_text
from tests.integration.conftest import wait_for

# A variable whose pickling takes 3 s, so the snapshot after this cell lasts that long whatever
# the machine's speed (a large array's save can be over before the test has typed its question).
SLOW_TO_SAVE_CELL = (
    "class SlowToSave:\n"
    "    def __reduce__(self):\n"
    "        import time\n"
    "        time.sleep(3)\n"
    "        return (SlowToSave, ())\n"
    "slow = SlowToSave()\n"
    "big = np.zeros(40_000_000)\n"
    "big.size"
)


def new_session(page, model: str | None = None) -> AnalysisSession:
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    session = AnalysisSession.objects.get(owner__username="alice")
    if model:
        AnalysisSession.objects.filter(id=session.id).update(model=model)
        page.reload()
    # The code editor loads after the page: a cell typed while it takes the text box's place in
    # code mode would be typed into a box being hidden (a fill that timed out, under load).
    page.locator("form.composer[data-editor=codemirror]").wait_for(timeout=30_000)
    return session


def test_a_question_sent_while_the_kernel_saves_is_answered(stack, web, shoot, alice_login):
    from playwright.sync_api import expect

    stack.script(anthropic_text("It holds 40 million numbers."))
    page = alice_login()
    session = new_session(page)
    composer, status = page.get_by_test_id("composer-input"), page.get_by_test_id("running-status")
    page.get_by_test_id("mode-toggle").click()
    composer.fill(SLOW_TO_SAVE_CELL)
    composer.press("Control+Enter")
    page.get_by_test_id("mode-toggle").click()  # back to asking, while the cell runs
    composer.fill("How big is big?")

    expect(status).to_have_attribute("data-phase", "saving", timeout=90_000)
    expect(page.get_by_test_id("send")).to_be_enabled()
    composer.press("Enter")
    expect(page.get_by_test_id("user-message")).to_have_count(1)
    shoot(page, "queued")
    expect(page.get_by_test_id("assistant-message")).to_contain_text("40 million", timeout=60_000)
    expect(page.locator(".composer-error")).to_be_hidden()

    cell_turn, question = Turn.objects.filter(session=session).order_by("id")
    assert question.created_at < cell_turn.finished_at, "asked while the first turn still saved"
    assert (cell_turn.status, question.status) == (Turn.Status.DONE, Turn.Status.DONE)
    expect(status).to_be_hidden()


def test_a_kernel_killed_for_memory_comes_back_with_its_variables(stack, web, shoot, alice_login):
    from playwright.sync_api import expect

    page = alice_login()
    session = new_session(page)
    page.get_by_test_id("mode-toggle").click()
    composer = page.get_by_test_id("composer-input")
    composer.fill("x = 41")
    composer.press("Control+Enter")
    wait_for(session)

    # A real out-of-memory cell: 1.6 GB written under the test sandboxd's 1 GiB limit.
    composer.fill("hog = np.ones(200_000_000)")
    composer.press("Control+Enter")
    notice = page.locator("[data-testid=notice][data-type=kernel_restored]")
    expect(notice).to_contain_text("died while running this cell (out of memory?)", timeout=60_000)
    expect(notice).to_contain_text("were restored")
    expect(page.get_by_test_id("code-cell").nth(1)).to_have_attribute("data-state", "error")
    expect(page.get_by_test_id("running-status")).to_be_hidden(timeout=60_000)

    composer.fill("x + 1")
    composer.press("Control+Enter")
    cells = page.get_by_test_id("code-cell")
    expect(cells.nth(2).get_by_test_id("cell-output")).to_have_text("42", timeout=60_000)
    shoot(page, "restored")
    order = (
        page.get_by_test_id("transcript")
        .locator("[data-testid=code-cell], [data-testid=notice]")
        .evaluate_all("nodes => nodes.map(n => n.dataset.type || n.dataset.testid)")
    )
    assert order == ["code-cell", "code-cell", "kernel_restored", "code-cell"], order


def test_send_is_off_with_the_reason_when_the_model_cannot_answer(stack, web, shoot, alice_login):
    from playwright.sync_api import expect

    page = alice_login()
    new_session(page, model="ollama/qwen-test")
    send, reason = page.get_by_test_id("send"), page.get_by_test_id("send-reason")
    expect(send).to_be_disabled()
    expect(reason).to_have_text(
        f"The Ollama server at {SILENT_OLLAMA} does not answer. Code cells still run."
    )
    picker = page.get_by_test_id("model-picker")
    labels = picker.locator("option").all_inner_texts()
    assert labels == ["ollama/qwen-test (unavailable)", "anthropic/claude-test", "openai/gpt-test"], labels
    shoot(page, "send-off")

    page.get_by_test_id("mode-toggle").click()  # a code cell still runs
    expect(send).to_be_enabled()
    expect(reason).to_be_hidden()
    composer = page.get_by_test_id("composer-input")
    composer.fill("6 * 7")
    composer.press("Control+Enter")
    expect(page.get_by_test_id("cell-output")).to_have_text("42", timeout=60_000)

    page.get_by_test_id("mode-toggle").click()
    expect(send).to_be_disabled()
    picker.select_option("anthropic/claude-test")
    expect(send).to_be_enabled()
    expect(reason).to_be_hidden()
