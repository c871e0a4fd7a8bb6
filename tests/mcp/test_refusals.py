"""Who may call, and bad input: a missing or bad token is HTTP 401, a stranger's session is not
found, and every refused call is a tool error with a clear message while the server serves on."""

from __future__ import annotations

import asyncio
import base64
import uuid

import httpx
import pytest
from mcp.types import TextContent

from analyst.accounts import usage
from analyst.models import AnalysisSession, ApiToken, Turn
from tests.mcp.conftest import http_client, off_the_loop, token_of

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


@pytest.mark.parametrize("authorization", [None, "Bearer ada_not-a-token", "Basic YWxpY2U6cHc="])
def test_a_missing_or_bad_token_is_http_401(web, stack, authorization):
    headers = {**MCP_HEADERS, **({"Authorization": authorization} if authorization else {})}
    response = httpx.post(f"{web}/mcp", json=INITIALIZE, headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert response.json()["error"]["code"] == "unauthorized"


def test_the_official_client_with_a_bad_token_is_refused_with_401(web, stack):
    statuses: list[int] = []

    async def scenario():
        async with http_client(web, "ada_wrong", statuses=statuses) as client:
            await client.list_tools()

    with pytest.raises(BaseException, match="error"):
        asyncio.run(scenario())
    assert statuses and set(statuses) == {401}


def test_a_token_revoked_between_calls_stops_working(web, alice_token):
    statuses: list[int] = []

    async def scenario():
        async with http_client(web, alice_token, statuses=statuses) as client:
            await client.call_tool("list_sessions", {})
            await off_the_loop(ApiToken.objects.all().delete)
            await client.call_tool("list_sessions", {})

    with pytest.raises(BaseException, match="error"):
        asyncio.run(scenario())
    assert 200 in statuses and statuses[-1] == 401


def test_another_users_session_is_not_found(web, alice_token):
    bob_token = token_of("bob")

    async def scenario():
        async with http_client(web, alice_token) as alice:
            sid = (await alice.call_tool("create_session", {})).structured_content["session_id"]
            await alice.call_tool("run_python", {"session_id": sid, "code": "secret = 'alice only'"})
        async with http_client(web, bob_token) as bob:
            listed = await bob.call_tool("list_sessions", {})
            calls = [
                await bob.call_tool("run_python", {"session_id": sid, "code": "print(secret)"}),
                await bob.call_tool("ask", {"session_id": sid, "question": "what is secret?"}),
                await bob.call_tool("list_files", {"session_id": sid}),
                await bob.call_tool("read_file", {"session_id": sid, "path": "data/x.csv"}),
                await bob.call_tool(
                    "upload_file", {"session_id": sid, "name": "x.csv", "content_base64": "YSxiCg=="}
                ),
            ]
            return sid, listed, calls

    sid, listed, calls = asyncio.run(scenario())
    assert listed.structured_content == {"sessions": []}
    for result in calls:
        assert result.is_error
        assert text_of(result).endswith(f"no session {sid!r} (it does not exist, or it is not yours)")
    assert Turn.objects.filter(session_id=sid).count() == 1, "bob's calls ran nothing"


def test_bad_input_is_a_clear_tool_error_and_the_server_serves_on(web, alice_token):
    big = base64.b64encode(b"a,b\n" + b"1,2\n" * (20 << 10)).decode()  # 80 KiB, over the 64 KiB limit

    async def scenario():
        async with http_client(web, alice_token) as client:
            sid = (await client.call_tool("create_session", {})).structured_content["session_id"]
            upload = {"session_id": sid, "name": "data.csv"}
            results = {
                "unknown session": await client.call_tool(
                    "run_python", {"session_id": str(uuid.uuid4()), "code": "1"}
                ),
                "not an id": await client.call_tool("list_files", {"session_id": "../etc"}),
                "no code": await client.call_tool("run_python", {"session_id": sid}),
                "code not a string": await client.call_tool("run_python", {"session_id": sid, "code": ["1"]}),
                "code too long": await client.call_tool(
                    "run_python", {"session_id": sid, "code": "#" * 20001}
                ),
                "too big": await client.call_tool("upload_file", {**upload, "content_base64": big}),
                "not base64": await client.call_tool("upload_file", {**upload, "content_base64": "&&&"}),
                "refused kind": await client.call_tool(
                    "upload_file", {"session_id": sid, "name": "tool.exe", "content_base64": "TVo="}
                ),
                "unknown tool": await client.call_tool("delete_everything", {}),
            }
            after = await client.call_tool("run_python", {"session_id": sid, "code": "40 + 2"})
            return results, after

    results, after = asyncio.run(scenario())
    for what, result in results.items():
        assert result.is_error, what
    messages = {what: text_of(result) for what, result in results.items()}
    assert "no session" in messages["unknown session"] and "no session" in messages["not an id"]
    assert "code" in messages["no code"] and "code" in messages["code not a string"]
    assert "20,001 characters long; at most 20,000" in messages["code too long"]
    assert "over 64 KiB, the most an MCP upload takes" in messages["too big"]
    assert messages["not base64"].endswith("content_base64 is not valid base64")
    assert "this kind of file cannot be read as a table; accepted: .csv" in messages["refused kind"]
    assert "delete_everything" in messages["unknown tool"]
    assert not after.is_error and after.structured_content["result"] == "42"


def test_a_call_while_a_turn_runs_in_the_session_is_refused(web, alice_token):
    async def scenario():
        async with http_client(web, alice_token) as client:
            sid = (await client.call_tool("create_session", {})).structured_content["session_id"]
            slow = asyncio.create_task(
                client.call_tool(
                    "run_python", {"session_id": sid, "code": "import time\ntime.sleep(4)\n'slept'"}
                )
            )
            while not await off_the_loop(Turn.objects.filter(session_id=sid).exists):
                await asyncio.sleep(0.05)
            refused = await client.call_tool("run_python", {"session_id": sid, "code": "1"})
            return refused, await slow

    refused, slow = asyncio.run(scenario())
    assert refused.is_error
    assert "a turn is already running in this session" in text_of(refused)
    assert slow.structured_content["result"] == "'slept'"


def test_mcp_calls_count_against_the_same_daily_token_budget(web, alice_token):
    """The web server runs with ANALYST_DAILY_TOKEN_BUDGET=50000 (conftest); alice spent 51,200."""
    session = AnalysisSession.objects.create(owner=ApiToken.objects.get().user, model="anthropic/claude-test")
    earlier = Turn.objects.create(
        session=session, requested_by=session.owner, kind="chat", input="?", status="done"
    )
    usage.record_call(turn=earlier, model=session.model, input_tokens=50_000, output_tokens=1_200)

    async def scenario():
        async with http_client(web, alice_token) as client:
            asked = await client.call_tool("ask", {"session_id": str(session.id), "question": "And now?"})
            cell = await client.call_tool("run_python", {"session_id": str(session.id), "code": "1 + 1"})
            return asked, cell

    asked, cell = asyncio.run(scenario())
    assert asked.is_error and "You have used 51,200 of your 50,000 tokens for today" in text_of(asked)
    assert not cell.is_error, "code cells still run, as on the page"


def test_a_call_the_client_gives_up_on_stops_its_turn(web, alice_token):
    """A client's timeout cancels its request; the cell is interrupted, as Stop on the page does,
    so the session is free for the next call instead of busy for the cell's whole run."""

    async def scenario():
        async with http_client(web, alice_token) as client:
            sid = (await client.call_tool("create_session", {})).structured_content["session_id"]
            code = "import time\nfor _ in range(600):\n    time.sleep(0.1)"
            with pytest.raises(Exception, match="[Tt]imed out|[Tt]imeout"):
                await client.call_tool(
                    "run_python", {"session_id": sid, "code": code}, read_timeout_seconds=3
                )
            for _ in range(600):  # a minute at most: the stop takes a moment on a loaded machine
                turn = await off_the_loop(Turn.objects.filter(session_id=sid).order_by("id").last)
                if turn.status in Turn.FINISHED:
                    break
                await asyncio.sleep(0.1)
            after = await client.call_tool("run_python", {"session_id": sid, "code": "'free'"})
            return turn, after

    turn, after = asyncio.run(scenario())
    assert turn.status == Turn.Status.CANCELLED
    assert after.structured_content["result"] == "'free'"
