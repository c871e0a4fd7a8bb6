"""Reading a session: the model's cells folded to one line with their code a click away, the
user's open; an error as its type, message and failing line, the traceback folded; a long
output folded past its first lines; copy buttons on code, output, answers and share links."""

from __future__ import annotations

import re

from tests.fakes.model_server import anthropic_text, anthropic_tool_call

LOOK = (
    "# look at the data\nimport pandas as pd\n"
    "sales = pd.DataFrame({'region': ['north', 'south'], 'amount': [10, 32]})\nprint(sales.amount.sum())"
)
MISSING = "def margin(frame):\n    return frame['margin']\n\nmargin(sales)"
LONG = "for i in range(3_000):\n    print('line', i)"  # 35 kB: under the stdout cap


def open_session(page, stack):
    from playwright.sync_api import expect

    stack.script(
        anthropic_tool_call("run_python", {"code": LOOK}, tool_id="toolu_01"),
        anthropic_tool_call("run_python", {"code": MISSING}, tool_id="toolu_02"),
        anthropic_text("South sells **32**."),
    )
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    page.get_by_test_id("composer-input").fill("Who sells most?")
    page.get_by_test_id("composer-input").press("Enter")
    expect(page.get_by_test_id("assistant-message").last).to_contain_text("South sells", timeout=90_000)


def test_model_cells_fold_errors_are_compact_and_long_output_folds(stack, web, alice_login, shoot):
    from playwright.sync_api import expect

    page = alice_login()
    open_session(page, stack)
    cells = page.get_by_test_id("code-cell")
    look, missing = cells.nth(0), cells.nth(1)
    # No figure, so no plotly.js: it is loaded when the first figure needs it.
    assert page.evaluate(
        "() => window.Plotly === undefined && !document.querySelector('script[src*=plotly]')"
    )
    # The model's cell: one line (its first line of code, past the comment), its output shown.
    expect(look.get_by_test_id("cell-code")).to_be_hidden()
    expect(look.get_by_test_id("cell-summary")).to_have_text("import pandas as pd")
    expect(look.get_by_test_id("cell-output")).to_have_text("42")
    look.get_by_test_id("cell-toggle").click()
    expect(look.get_by_test_id("cell-code")).to_be_visible()
    expect(look.get_by_test_id("cell-summary")).to_be_hidden()

    # The error: its type and message, the cell's failing line; the traceback folded.
    error = missing.get_by_test_id("error-output")
    expect(error.get_by_test_id("error-summary")).to_have_text("KeyError: 'margin'")
    expect(error.get_by_test_id("error-line")).to_have_text("line 2: return frame['margin']")
    expect(error.get_by_test_id("error-traceback")).to_be_hidden()
    error.get_by_text("Show full traceback").click()
    expect(error.get_by_test_id("error-traceback")).to_be_visible()
    expect(error.get_by_test_id("error-traceback")).to_contain_text("pandas")  # the library's frames
    shoot(page, "folded")

    # The user's own cell opens; 3,000 printed lines show their first 300 and a way to the rest.
    page.get_by_test_id("mode-toggle").click()  # to a code cell of the user's own
    composer = page.get_by_test_id("composer-input")
    composer.fill(LONG)
    composer.press("Control+Enter")
    own = cells.nth(2)
    expect(own.get_by_test_id("show-all")).to_have_text("Show all 3,000 lines", timeout=60_000)
    expect(own.get_by_test_id("cell-code")).to_be_visible()
    shown = own.locator("pre.stream").evaluate("pre => pre.textContent.split('\\n').filter(Boolean)")
    assert shown[0] == "line 0" and shown[-1] == "line 299" and len(shown) == 300
    own.get_by_test_id("show-all").click()
    expect(own.get_by_test_id("show-all")).to_have_count(0)
    every = own.locator("pre.stream").evaluate("pre => pre.textContent.split('\\n').filter(Boolean)")
    assert len(every) == 3_000 and every[-1] == "line 2999"


def test_output_shown_whole_stays_whole_as_more_arrives(stack, web, alice_login):
    from playwright.sync_api import expect

    page = alice_login()
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    page.get_by_test_id("mode-toggle").click()
    composer = page.get_by_test_id("composer-input")
    code = (
        "import time\nfor i in range(400):\n    print('a', i)\n"
        "time.sleep(4)\nfor i in range(100):\n    print('b', i)"
    )
    composer.fill(code)
    composer.press("Control+Enter")
    cell = page.get_by_test_id("code-cell").first
    expect(cell.get_by_test_id("show-all")).to_have_text("Show all 400 lines", timeout=60_000)
    cell.get_by_test_id("show-all").click()
    expect(cell).to_have_attribute("data-state", "done", timeout=60_000)
    expect(cell.get_by_test_id("show-all")).to_have_count(0)  # opened once, it stays open
    lines = cell.locator("pre.stream").evaluate("pre => pre.textContent.split('\\n').filter(Boolean)")
    assert len(lines) == 500 and lines[399] == "a 399" and lines[-1] == "b 99"


def test_copy_buttons_copy_code_output_answers_and_share_links(stack, web, alice_login):
    page = alice_login()
    page.context.grant_permissions(["clipboard-write"])
    open_session(page, stack)
    cell = page.get_by_test_id("code-cell").first
    cell.get_by_test_id("cell-toggle").click()
    cell.get_by_test_id("cell-code").hover()
    cell.get_by_test_id("copy-code").click()
    assert pasted(page) == LOOK
    cell.get_by_test_id("copy-output").click()
    assert pasted(page) == "42\n"
    page.get_by_test_id("assistant-message").last.get_by_test_id("copy-answer").click()
    assert pasted(page) == "South sells **32**."
    page.get_by_test_id("create-share").click()  # a share link, and its own Copy link button
    page.get_by_test_id("copy-share-url").click()
    assert pasted(page) == page.get_by_test_id("share-url").input_value()
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/s/[\w-]+/", pasted(page))


def pasted(page) -> str:
    """What the clipboard holds, pasted with the keyboard into a blank page of the same browser
    (the app's own pages may not read the clipboard: their Permissions-Policy turns that off)."""
    blank = page.context.new_page()
    try:
        blank.set_content("<textarea autofocus></textarea>")
        blank.locator("textarea").focus()
        blank.keyboard.press("Control+V")
        return blank.locator("textarea").input_value()
    finally:
        blank.close()
