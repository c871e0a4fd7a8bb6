"""`python manage.py mcp` over stdio, started by the official client as Claude Desktop starts its
servers: the same tools, as the user of ANALYST_API_TOKEN; no token or a bad one ends it at once,
saying why."""

from __future__ import annotations

import asyncio
import base64
import os
import subprocess
import sys

from django.contrib.auth import get_user_model
from mcp import Client
from mcp.types import ImageContent

from analyst.models import AnalysisSession, Event
from tests.mcp.conftest import CLIENT, stdio_parameters, token_of
from tests.sandboxd_process import ROOT

CHART = "import matplotlib.pyplot as plt\nplt.bar(['a', 'b'], [3, 5])\nplt.show()"


def test_a_client_over_stdio_keeps_state_across_calls(app_env, worker, stack, alice_token):
    async def scenario():
        async with Client(stdio_parameters(app_env, alice_token), client_info=CLIENT) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            made = (await client.call_tool("create_session", {"title": "Over stdio"})).structured_content
            sid = made["session_id"]
            upload = {
                "session_id": sid,
                "name": "t.tsv",
                "content_base64": base64.b64encode(b"a\tb\n1\t2\n").decode(),
            }
            uploaded = await client.call_tool("upload_file", upload)
            await client.call_tool("run_python", {"session_id": sid, "code": "n = 6 * 7"})
            kept = await client.call_tool("run_python", {"session_id": sid, "code": "n"})
            chart = await client.call_tool("run_python", {"session_id": sid, "code": CHART})
            failed = await client.call_tool("run_python", {"session_id": sid, "code": "n / 0"})
            return names, made, uploaded, kept, chart, failed

    names, made, uploaded, kept, chart, failed = asyncio.run(scenario())
    assert uploaded.structured_content["file"]["columns"] == 2
    assert "sep='\\t'" in uploaded.structured_content["description"]
    assert "run_python" in names and "run_analysis" in names and len(names) == 8
    assert made["url"] == f"http://analyst.example/sessions/{made['session_id']}/", "ANALYST_PUBLIC_URL"
    assert kept.structured_content["result"] == "42"
    assert any(isinstance(block, ImageContent) for block in chart.content)
    assert failed.is_error and "ZeroDivisionError" in failed.content[0].text
    session = AnalysisSession.objects.get(id=made["session_id"])
    assert session.owner.username == "alice"
    cells = Event.objects.filter(session=session, type="cell").order_by("seq")
    assert [c.payload["code"] for c in cells] == ["n = 6 * 7", "n", CHART, "n / 0"]


def test_without_a_valid_token_it_exits_saying_why(app_env, stack):
    env = {**os.environ, **app_env}
    for token, says in (("", "set ANALYST_API_TOKEN"), ("ada_wrong", "not a valid API token")):
        finished = subprocess.run(
            [sys.executable, "manage.py", "mcp"],
            cwd=ROOT, env={**env, "ANALYST_API_TOKEN": token},
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert finished.returncode != 0
        assert says in finished.stderr
        assert finished.stdout == "", "nothing but protocol messages on stdout"


def test_another_users_session_is_not_found_over_stdio(app_env, stack, alice_token):
    theirs = AnalysisSession.objects.create(owner=get_user_model().objects.create_user("carol"))
    bob = token_of("bob")

    async def scenario():
        async with Client(stdio_parameters(app_env, bob), client_info=CLIENT) as client:
            return await client.call_tool("run_python", {"session_id": str(theirs.id), "code": "1"})

    result = asyncio.run(scenario())
    assert result.is_error and "it does not exist, or it is not yours" in result.content[0].text
