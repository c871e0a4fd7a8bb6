"""A new session's kernel, not started yet, reads as waiting, not as a fault: "Starts on first
use" in the header and the variables panel, on a desktop and on a phone."""

from __future__ import annotations

import re

import pytest

WIDTHS = [
    pytest.param({"width": 1280, "height": 900}, id="desktop"),
    pytest.param({"width": 390, "height": 844}, id="phone"),
]


@pytest.mark.parametrize("viewport", WIDTHS)
def test_a_new_sessions_kernel_starts_on_first_use(stack, web, alice_login, shoot, viewport):
    from playwright.sync_api import expect

    page = alice_login()
    page.set_viewport_size(viewport)
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    state = page.get_by_test_id("kernel-state")
    expect(state).to_have_attribute("data-state", "stopped")
    expect(page.get_by_test_id("kernel-state-word")).to_have_text("Starts on first use")
    expect(state).to_have_attribute("title", re.compile("starts when a cell runs"))
    message = page.get_by_test_id("variables-message")  # in the Variables drawer
    expect(message).to_contain_text("The kernel starts on first use")
    expect(page.get_by_text(re.compile("not running", re.I))).to_have_count(0)
    shoot(page, "new")
