"""LaTeX is drawn by KaTeX, served by the app with its fonts, on a desktop and on a phone: a
cell's text/latex output, and $…$ and $$…$$ in an answer (while "$5 to $10" stays money). A
hostile formula (\\href to javascript:, \\htmlClass, \\url, \\includegraphics) is drawn inert:
no link, no class of its choosing, no fetch, and nothing the page's policy had to refuse."""

from __future__ import annotations

import re

import pytest

from tests.e2e.test_csp import watched
from tests.fakes.model_server import anthropic_text, anthropic_tool_call

WIDTHS = [
    pytest.param({"width": 1280, "height": 900}, id="desktop"),
    pytest.param({"width": 390, "height": 844}, id="phone"),
]

CELL = r"""from IPython.display import Latex, display
display(Latex(r"$$\frac{a}{b} = \sqrt{x^2 + 1}$$"))
display(Latex(r"$\href{javascript:alert(3)}{click}$ and $\htmlClass{pwned}{z}$"))
"""
ANSWER = (
    "Prices went from $5 to $10. The fit is $y = \\beta x^2$, and\n\n"
    "$$\\sum_{i=1}^{n} x_i = \\frac{n(n+1)}{2}$$\n\n"
    "Hostile: $\\href{javascript:alert(1)}{x}$, $\\htmlClass{pwned}{y}$, $\\url{javascript:alert(2)}$,"
    " $\\includegraphics{http://127.0.0.2/leak.png}$, $\\htmlStyle{background:url(/leak)}{w}$."
)


@pytest.mark.parametrize("viewport", WIDTHS)
def test_latex_is_drawn_by_katex_and_hostile_latex_is_inert(stack, web, alice_login, shoot, viewport):
    from playwright.sync_api import expect

    stack.script(anthropic_tool_call("run_python", {"code": CELL}), anthropic_text(ANSWER))
    page = alice_login()
    page.set_viewport_size(viewport)
    said = watched(page)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(request.url))
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    page.get_by_test_id("composer-input").fill("Fit it")
    page.get_by_test_id("composer-input").press("Enter")
    answer = page.get_by_test_id("assistant-message").last
    expect(answer).to_contain_text("Prices went from $5 to $10.", timeout=90_000)

    # The answer's formulas, inline and displayed, drawn by KaTeX (its HTML and its MathML).
    expect(answer.locator(".math-inline.typeset")).to_have_count(6)
    expect(answer.locator(".math-inline .katex")).to_have_count(4)  # and two refused whole (\html…)
    expect(answer.locator(".math-inline .katex-error")).to_have_count(2)
    expect(answer.locator(".math-inline .katex-html .msupsub")).to_have_count(1)  # x²
    expect(answer.locator(".math-display.typeset .katex-display .mfrac")).to_have_count(1)
    expect(answer.locator(".math-display annotation")).to_have_text(r"\sum_{i=1}^{n} x_i = \frac{n(n+1)}{2}")

    # The cell's text/latex outputs too.
    cell = page.get_by_test_id("code-cell").first
    cell.get_by_test_id("cell-toggle").click()
    outputs = cell.get_by_test_id("latex-output")
    expect(outputs).to_have_count(2)
    expect(outputs.first.locator(".katex-display .mfrac")).to_have_count(1)
    expect(outputs.first.locator(".katex-display .sqrt svg")).to_have_count(1)
    expect(outputs.nth(1).locator(".math-inline.typeset")).to_have_count(2)  # text with two formulas
    shoot(page, "drawn")

    # Hostile TeX is drawn as its source: nothing links, takes a class, or fetches.
    transcript = page.get_by_test_id("transcript")
    expect(transcript.locator(".katex-error, .katex [style*='cc0000']").first).to_be_visible()
    assert transcript.locator("a").count() == 0
    assert transcript.locator(".pwned").count() == 0
    assert transcript.locator(".katex img, .katex [style*='url']").count() == 0
    handlers = "[...document.querySelectorAll('.katex *')].flatMap((n) => n.getAttributeNames())"
    assert not [name for name in page.evaluate(handlers) if name.startswith("on") or "href" in name]
    assert dialogs == []
    assert not [url for url in fetched if "leak" in url or not url.startswith(web)], fetched

    # KaTeX's module, stylesheet and fonts came from this site, under the page's policy.
    assert f"{web}/static/vendor/katex.mjs" in fetched
    assert any(
        re.match(rf"{re.escape(web)}/static/vendor/fonts/KaTeX_Main-Regular\.woff2$", url) for url in fetched
    )
    assert page.evaluate("document.fonts.check('16px KaTeX_Main')")
    assert said == [] and page.evaluate("window.__violations") == []
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"], "no sideways scrolling"
