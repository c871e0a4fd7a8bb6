"""The code cell is written in a real editor (CodeMirror), on a desktop and on a phone: Tab
indents, a new line after `if …:` is indented, Shift+Enter runs, and Edit brings a cell's code
back into the same editor. If the editor's script cannot be loaded, the plain text box still
writes and runs a cell."""

from __future__ import annotations

import re

import pytest

WIDTHS = [
    pytest.param({"width": 1280, "height": 900}, id="desktop"),
    pytest.param({"width": 390, "height": 844}, id="phone"),
]


def editor_text(page) -> str:
    """The code in the editor, line by line as it is drawn."""
    return page.get_by_test_id("composer-input").evaluate(
        "node => [...node.querySelectorAll('.cm-line')].map((line) => line.textContent).join('\\n')"
    )


def new_code_cell(page, web: str, viewport: dict[str, int]) -> None:
    from playwright.sync_api import expect

    page.set_viewport_size(viewport)
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    page.get_by_test_id("mode-toggle").click()
    expect(page.locator("form.composer")).to_have_attribute("data-editor", re.compile("codemirror|textarea"))


@pytest.mark.parametrize("viewport", WIDTHS)
def test_the_editor_indents_and_shift_enter_runs(stack, web, alice_login, shoot, viewport):
    from playwright.sync_api import expect

    page = alice_login()
    new_code_cell(page, web, viewport)
    expect(page.locator("form.composer")).to_have_attribute("data-editor", "codemirror")
    composer = page.get_by_test_id("composer-input")
    expect(composer).to_have_class(re.compile(r"\bcm-content\b"))
    expect(composer).to_be_focused()

    keyboard = page.keyboard
    keyboard.type("if True:")
    keyboard.press("Enter")  # the block's first line: indented
    keyboard.type("a = 1")
    keyboard.press("Enter")  # the next one too
    keyboard.press("Backspace")  # one indent back: out of the block
    keyboard.type("b = (2")  # the bracket is closed as it opens
    keyboard.press("Tab")  # Tab indents the line, and stays in the editor
    keyboard.press("End")
    keyboard.press("Enter")
    keyboard.press("Shift+Tab")
    keyboard.type("print(a + b)")
    assert editor_text(page) == "if True:\n    a = 1\n    b = (2)\nprint(a + b)"
    expect(composer).to_be_focused()
    expect(page.locator(".code-editor .cm-matchingBracket")).to_have_count(2)  # beside print(a + b)'s )
    shoot(page, "typed")

    keyboard.press("Shift+Enter")
    cell = page.get_by_test_id("code-cell").first
    expect(cell.get_by_test_id("cell-output")).to_have_text("3", timeout=60_000)
    expect(page.locator(".code-editor .cm-placeholder")).to_be_visible()  # emptied once sent

    # Edit: the cell's code back in the same editor, run again as a new cell.
    cell.get_by_test_id("cell-edit").click()
    expect(page.locator("form.composer")).to_have_attribute("data-editor", "codemirror")
    expect(composer).to_be_focused()
    assert editor_text(page) == "if True:\n    a = 1\n    b = (2)\nprint(a + b)"
    keyboard.press("Control+End")
    keyboard.press("Enter")
    keyboard.type("for x in 'ab':")
    keyboard.press("Enter")
    keyboard.type("print(x)")
    assert editor_text(page).endswith("print(a + b)\nfor x in 'ab':\n    print(x)")
    shoot(page, "editing")
    keyboard.press("Shift+Enter")
    edited = page.get_by_test_id("code-cell").nth(1)
    expect(edited.get_by_test_id("cell-output")).to_have_text("3\na\nb", timeout=60_000)
    expect(edited.get_by_test_id("cell-edited")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"], "no sideways scrolling"

    # Back to asking: the text box again, and the editor out of sight.
    page.get_by_test_id("mode-toggle").click()
    expect(page.locator(".code-editor")).to_be_hidden()
    expect(composer).to_have_js_property("tagName", "TEXTAREA")
    expect(composer).to_be_visible()
    expect(composer).to_be_focused()


@pytest.mark.parametrize("viewport", WIDTHS)
def test_without_the_editors_script_the_text_box_runs_cells(stack, web, alice_login, shoot, viewport):
    from playwright.sync_api import expect

    page = alice_login()
    page.route("**/static/vendor/codemirror.js", lambda route: route.abort())
    new_code_cell(page, web, viewport)
    expect(page.locator("form.composer")).to_have_attribute("data-editor", "textarea")
    composer = page.get_by_test_id("composer-input")
    expect(composer).to_be_visible()
    composer.fill("print(6 * 7)")
    composer.press("Shift+Enter")
    expect(page.get_by_test_id("cell-output")).to_have_text("42", timeout=60_000)
    expect(composer).to_have_value("")
    shoot(page, "fallback")
