"""The owner watches an MCP client's cell live on the session's page: the cell says who ran it,
its output arrives while it runs, and its chart shows."""

from __future__ import annotations

import asyncio
import re
from concurrent.futures import ThreadPoolExecutor

from django.contrib.auth import get_user_model

from analyst.models import ApiToken
from tests.mcp.conftest import http_client

CODE = (
    "import time, matplotlib.pyplot as plt\n"
    "print('first line', flush=True)\n"
    "time.sleep(3)\n"
    "print('second line')\n"
    "plt.plot([1, 3, 2]); plt.show()"
)


def test_a_cell_run_over_mcp_shows_live_on_the_owners_page(stack, web, alice_login, shoot):
    from playwright.sync_api import expect

    page = alice_login()
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    session_id = page.url.rstrip("/").rsplit("/", 1)[1]
    expect(page.get_by_test_id("connection-status")).to_have_attribute("data-state", "live", timeout=15_000)
    _, token = ApiToken.issue(get_user_model().objects.get(username="alice"))

    async def run_cell():
        async with http_client(web, token) as client:
            return await client.call_tool("run_python", {"session_id": session_id, "code": CODE})

    with ThreadPoolExecutor(1) as pool:
        call = pool.submit(asyncio.run, run_cell())
        cell = page.get_by_test_id("code-cell")
        expect(cell.get_by_test_id("cell-author")).to_have_text(
            "run over MCP by pytest-agent", timeout=30_000
        )
        expect(cell).to_contain_text("first line", timeout=30_000)
        assert not call.done(), "the page showed the output while the cell still ran"
        result = call.result(timeout=60)
    expect(cell).to_contain_text("second line")
    expect(cell.locator("img")).to_have_count(1)
    shoot(page, "mcp-cell")
    assert not result.is_error
