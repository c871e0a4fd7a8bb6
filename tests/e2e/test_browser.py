"""A person's way through the app, in Chromium: sign up, upload, ask, see the chart, reload
mid-turn, share, and a viewer who sees it all and can change nothing."""

from __future__ import annotations

import re

from analyst.models import AnalysisSession, KernelSnapshot, Turn
from sandboxes import Sandbox
from tests.fakes.model_server import anthropic_text, anthropic_tool_call
from tests.integration.conftest import wait_for

CSV = "region,amount\nnorth,10\nsouth,32\neast,25\n"
CODE = (
    "df = pd.read_csv('data/sales.csv')\n"
    "print(df.shape)\n"
    "df.groupby('region').amount.sum().plot(kind='bar')\n"
    "plt.show()"
)
ANSWER = ["South ", "sells ", "the ", "most: ", "32 ", "of ", "67."]

# The image's width once it has loaded, 0 if it failed to: the element is in the page before
# its picture has arrived, so reading `complete` at once would race the request.
WIDTH_WHEN_LOADED = """img => img.complete ? img.naturalWidth : new Promise(settle => {
    img.addEventListener('load', () => settle(img.naturalWidth));
    img.addEventListener('error', () => settle(0));
})"""


def loaded_width(image) -> int:
    return image.evaluate(WIDTH_WHEN_LOADED)


def test_sign_up_upload_ask_reload_and_share(stack, web, browser, shoot, tmp_path):
    from playwright.sync_api import expect

    stack.script(
        anthropic_tool_call("run_python", {"code": CODE}, text_before="Let me plot it."),
        anthropic_text(ANSWER).paced(0.5),  # slow enough to reload while it streams
    )
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()

    page.goto(f"{web}/accounts/signup/")
    page.fill("input[name=username]", "erin")
    page.fill("input[name=password1]", "a-long-passphrase")
    page.fill("input[name=password2]", "a-long-passphrase")
    page.click("form[data-testid=signup-form] button[type=submit]")
    # The signup answers alike for a free name and a taken one: log in with it now.
    page.fill("form[data-testid=login-form] input[name=password]", "a-long-passphrase")
    page.click("form[data-testid=login-form] button[type=submit]")
    page.wait_for_url(f"{web}/sessions/")
    page.get_by_test_id("new-session-title").fill("Sales")
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    session = AnalysisSession.objects.get(owner__username="erin")

    csv = tmp_path / "sales.csv"
    csv.write_text(CSV)
    page.get_by_test_id("upload-input").set_input_files(str(csv))
    expect(page.get_by_test_id("file-row")).to_contain_text("sales.csv", timeout=60_000)
    expect(page.get_by_test_id("file-added")).to_contain_text("3 rows × 2 columns", timeout=60_000)
    shoot(page, "uploaded")

    page.get_by_test_id("composer-input").fill("Which region sells most? Plot it.")
    page.get_by_test_id("composer-input").press("Enter")
    expect(page.get_by_test_id("chart")).to_have_count(1, timeout=90_000)
    expect(page.get_by_test_id("cell-output").first).to_contain_text("(3, 2)")
    shoot(page, "chart")

    assert Turn.objects.get(session=session).status == Turn.Status.RUNNING  # the answer still streams
    page.reload()
    expect(page.get_by_test_id("assistant-message").last).to_contain_text("32 of 67.", timeout=60_000)
    expect(page.get_by_test_id("user-message")).to_have_count(1)
    expect(page.get_by_test_id("code-cell")).to_have_count(1)
    expect(page.get_by_test_id("chart")).to_have_count(1)
    assert loaded_width(page.get_by_test_id("chart")) > 0
    assert "Let me plot it." in page.get_by_test_id("transcript").inner_text()
    shoot(page, "after-reload")

    page.get_by_test_id("create-share").click()
    share_url = page.get_by_test_id("share-url").first.input_value()
    assert re.fullmatch(rf"{web}/s/[A-Za-z0-9_-]{{43}}/", share_url)

    viewer = browser.new_context(viewport={"width": 1280, "height": 900})
    shared = viewer.new_page()
    shared.goto(share_url)
    expect(shared.get_by_test_id("chart")).to_have_count(1, timeout=30_000)
    assert loaded_width(shared.get_by_test_id("chart")) > 0
    expect(shared.get_by_test_id("assistant-message").last).to_contain_text("32 of 67.")
    expect(shared.get_by_test_id("readonly-banner")).to_be_visible()
    for control in ("composer-input", "send", "stop", "upload-input"):
        expect(shared.get_by_test_id(control)).to_have_count(0)
    shoot(shared, "shared")

    tried = shared.evaluate(
        """async (id) => {
            const post = (path, body) => fetch(path, {method: 'POST', body: JSON.stringify(body),
                                                      headers: {'Content-Type': 'application/json'}});
            return [(await post(`/api/sessions/${id}/messages`, {content: 'hi'})).status,
                    (await post(`/api/sessions/${id}/cells`, {code: '1'})).status,
                    (await post(`/api/sessions/${id}/cancel`, {})).status];
        }""",
        str(session.id),
    )
    assert tried == [401, 401, 401]
    assert Turn.objects.filter(session=session).count() == 1
    viewer.close()
    context.close()


HOSTILE_MARKDOWN = (
    "Done. <script>window.pwned = 'script'</script> <img src=x onerror=\"window.pwned = 'img'\">"
    " [a link](javascript:window.pwned='link') <b onmouseover=\"window.pwned='hover'\">bold</b>"
)
HOSTILE_CELL = (
    "from IPython.display import HTML, display\n"
    'display(HTML(\'<table><tr><td onclick="window.pwned=1">cell</td></tr></table>'
    '<script>window.pwned = 2</script><a href="javascript:window.pwned=3">x</a>\'))\n'
    "pd.DataFrame({'name': ['<img src=x onerror=window.pwned=4>']})"
)


def test_what_the_model_or_a_cell_writes_cannot_run_script(stack, web, browser, shoot, alice_login):
    from playwright.sync_api import expect

    stack.script(anthropic_text(HOSTILE_MARKDOWN))
    page = alice_login()
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))

    composer = page.get_by_test_id("composer-input")
    composer.fill("Say something")
    composer.press("Enter")
    expect(page.get_by_test_id("assistant-message").last).to_contain_text("bold", timeout=60_000)

    page.get_by_test_id("mode-toggle").click()  # a code cell of my own, in the same kernel
    composer.fill(HOSTILE_CELL)
    composer.press("Control+Enter")
    expect(page.get_by_test_id("data-table")).to_have_attribute("data-state", "grid", timeout=60_000)
    expect(page.get_by_test_id("table-output")).to_have_count(1)  # the HTML; the DataFrame is a grid
    page.get_by_test_id("table-output").first.locator("td").first.click()
    page.get_by_text("bold").hover()
    shoot(page, "hostile")

    transcript = page.get_by_test_id("transcript")
    assert page.evaluate("window.pwned") is None
    assert transcript.locator("script, img[onerror], [onclick], [onmouseover]").count() == 0
    hrefs = transcript.locator("a[href]").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    assert not [href for href in hrefs if href.strip().lower().startswith("javascript:")]
    assert "<img src=x onerror=window.pwned=4>" in transcript.inner_text()  # shown as text, inert


def test_a_stopped_kernel_comes_back_with_its_variables(stack, web, browser, shoot, alice_login, sandboxd):
    from playwright.sync_api import expect

    page = alice_login()
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    session = AnalysisSession.objects.get(owner__username="alice")
    page.get_by_test_id("mode-toggle").click()
    composer = page.get_by_test_id("composer-input")
    composer.fill("x = 41")
    composer.press("Control+Enter")
    wait_for(session)
    assert KernelSnapshot.objects.filter(session=session).exists()
    session.refresh_from_db()
    gone = Sandbox.connect(session.sandbox_id, url=sandboxd.url, token=sandboxd.token)
    gone.kill()  # as the TTL reaper, or a restarted sandboxd, would
    gone.close()

    composer.fill("x + 1")
    composer.press("Control+Enter")
    cells = page.get_by_test_id("code-cell")
    expect(cells.nth(1).get_by_test_id("cell-output")).to_have_text("42", timeout=60_000)
    shoot(page, "restored")
    # The notice reads between the first cell and the one that waited for the restore.
    order = (
        page.get_by_test_id("transcript")
        .locator("[data-testid=code-cell], [data-testid=notice]")
        .evaluate_all("nodes => nodes.map(n => n.dataset.type || n.dataset.testid)")
    )
    assert order == ["code-cell", "kernel_restored", "code-cell"], order
    page.reload()
    notice = page.get_by_test_id("notice")
    expect(notice).to_contain_text("were restored", timeout=30_000)
    assert notice.evaluate("n => n.nextElementSibling.dataset.testid") == "code-cell"
