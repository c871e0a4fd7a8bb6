"""The MCP tools over Streamable HTTP at /mcp, with the official client: a session used as a
persistent kernel, its cells in the session's event log, charts as images, errors as tool errors."""

from __future__ import annotations

import asyncio
import base64

import httpx
from mcp.types import ImageContent, TextContent

from analyst.models import AnalysisSession, Event
from tests.fakes.model_server import anthropic_text, anthropic_tool_call
from tests.mcp.conftest import http_client

TOOLS = {
    "create_session",
    "list_sessions",
    "upload_file",
    "run_python",
    "ask",
    "list_files",
    "read_file",
    "run_analysis",
}
SALES = "city,amount\nLyon,10\nParis,32\nNice,5\n"
LOAD = "import pandas as pd\ndf = pd.read_csv('data/sales.csv')\nprint(len(df))"
CHART = "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()"


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


def test_the_tools_are_listed_with_their_arguments(web, alice_token):
    async def scenario():
        async with http_client(web, alice_token) as client:
            return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in asyncio.run(scenario())}
    assert set(tools) == TOOLS
    assert set(tools["run_python"].input_schema["required"]) == {"session_id", "code"}
    assert set(tools["upload_file"].input_schema["required"]) == {"session_id", "name", "content_base64"}
    assert tools["create_session"].input_schema.get("required", []) == []
    assert "stdout" in tools["run_python"].output_schema["properties"]


def test_a_session_is_a_persistent_kernel_whose_cells_show_on_its_page(web, alice_token):
    async def scenario():
        async with http_client(web, alice_token) as client:
            made = (await client.call_tool("create_session", {"title": "From an agent"})).structured_content
            sid = made["session_id"]
            upload = {
                "session_id": sid,
                "name": "sales.csv",
                "content_base64": base64.b64encode(SALES.encode()).decode(),
            }
            uploaded = await client.call_tool("upload_file", upload)
            first = await client.call_tool("run_python", {"session_id": sid, "code": LOAD})
            second = await client.call_tool("run_python", {"session_id": sid, "code": "int(df.amount.sum())"})
            listed = (await client.call_tool("list_sessions", {})).structured_content
            return made, uploaded, first, second, listed

    made, uploaded, first, second, listed = asyncio.run(scenario())
    assert made["title"] == "From an agent"
    assert made["url"] == f"{web}/sessions/{made['session_id']}/"
    assert httpx.get(made["url"], follow_redirects=False).status_code in (302, 200)
    assert not uploaded.is_error, text_of(uploaded)
    assert uploaded.structured_content["path"] == "data/sales.csv"
    assert uploaded.structured_content["file"]["rows"] == 3
    assert "pd.read_csv('data/sales.csv')" in uploaded.structured_content["description"]
    assert not first.is_error and first.structured_content["stdout"] == "3\n"
    assert second.structured_content["result"] == "47", "the kernel kept df from the call before"
    assert "47" in text_of(second)
    assert [s["session_id"] for s in listed["sessions"]] == [made["session_id"]]

    session = AnalysisSession.objects.get(id=made["session_id"])
    assert session.owner.username == "alice"
    cells = Event.objects.filter(session=session, type="cell").order_by("seq")
    assert [c.payload["code"] for c in cells] == [LOAD, "int(df.amount.sum())"]
    assert {(c.payload["via"], c.payload["client"]) for c in cells} == {("mcp", "pytest-agent")}
    types = list(Event.objects.filter(session=session).order_by("seq").values_list("type", flat=True))
    assert types.count("turn_done") == 2 and types.count("stdout") == 1


def test_a_chart_comes_back_as_png_image_content(web, alice_token):
    async def scenario():
        async with http_client(web, alice_token) as client:
            sid = (await client.call_tool("create_session", {})).structured_content["session_id"]
            return await client.call_tool("run_python", {"session_id": sid, "code": CHART})

    result = asyncio.run(scenario())
    assert not result.is_error, text_of(result)
    images = [block for block in result.content if isinstance(block, ImageContent)]
    assert len(images) == 1 and images[0].mime_type == "image/png"
    assert base64.b64decode(images[0].data).startswith(b"\x89PNG\r\n\x1a\n")
    assert result.structured_content["images"] == 1


def test_a_failing_cell_is_a_tool_error_holding_its_traceback(web, alice_token):
    async def scenario():
        async with http_client(web, alice_token) as client:
            sid = (await client.call_tool("create_session", {})).structured_content["session_id"]
            failed = await client.call_tool(
                "run_python", {"session_id": sid, "code": "print('before')\n{}['missing']"}
            )
            after = await client.call_tool("run_python", {"session_id": sid, "code": "1 + 1"})
            return failed, after

    failed, after = asyncio.run(scenario())
    assert failed.is_error
    text = text_of(failed)
    assert "before" in text and "KeyError" in text and "'missing'" in text
    assert "Traceback" in text or "----> 2" in text, "the traceback, not only the message"
    assert "\x1b[" not in text, "without the terminal's colours"
    assert after.structured_content["result"] == "2", "the session serves on"


def test_progress_carries_stdout_as_it_comes(web, alice_token):
    code = "import time\nfor i in range(3):\n    print('step', i, flush=True)\n    time.sleep(0.4)"
    heard: list[str] = []

    async def on_progress(progress, total, message):
        heard.append(message or "")

    async def scenario():
        async with http_client(web, alice_token) as client:
            sid = (await client.call_tool("create_session", {})).structured_content["session_id"]
            return await client.call_tool(
                "run_python", {"session_id": sid, "code": code}, progress_callback=on_progress
            )

    result = asyncio.run(scenario())
    assert result.structured_content["stdout"] == "step 0\nstep 1\nstep 2\n"
    assert "".join(heard) == "step 0\nstep 1\nstep 2\n"
    assert len(heard) >= 2, "in pieces as printed, not once at the end"


def test_ask_runs_a_whole_turn_and_returns_the_answer_with_its_chart(web, alice_token, stack):
    stack.script(
        anthropic_tool_call("run_python", {"code": CHART}, text_before="Plotting."),
        anthropic_text("The line rises, then falls."),
    )

    async def scenario():
        async with http_client(web, alice_token) as client:
            sid = (await client.call_tool("create_session", {})).structured_content["session_id"]
            return sid, await client.call_tool("ask", {"session_id": sid, "question": "Plot 1, 3, 2"})

    sid, result = asyncio.run(scenario())
    assert not result.is_error, text_of(result)
    assert result.structured_content["answer"] == "The line rises, then falls."
    assert result.structured_content["cells"] == [CHART]
    assert any(isinstance(block, ImageContent) for block in result.content)
    assert text_of(result).startswith("The line rises, then falls.")
    asked = Event.objects.get(session_id=sid, type="user_message")
    assert asked.payload == {
        "text": "Plot 1, 3, 2",
        "by": "alice",
        "via": "mcp",
        "client": "pytest-agent",
        "session_title": "Plot 1, 3, 2",  # it named the untitled session
    }
    assert stack.requests[0].json["messages"][0]["content"][0]["text"] == "Plot 1, 3, 2"


def test_files_are_listed_and_read_as_text_or_base64_within_a_limit(web, alice_token):
    code = (
        "open('notes.txt', 'w').write('héllo')\n"
        "open('blob.bin', 'wb').write(bytes(range(256)))\n"
        "open('big.txt', 'w').write('x' * 20000)"
    )

    async def scenario():
        async with http_client(web, alice_token) as client:
            sid = (await client.call_tool("create_session", {})).structured_content["session_id"]
            await client.call_tool("run_python", {"session_id": sid, "code": code})
            listed = await client.call_tool("list_files", {"session_id": sid})
            text = await client.call_tool("read_file", {"session_id": sid, "path": "notes.txt"})
            binary = await client.call_tool("read_file", {"session_id": sid, "path": "blob.bin"})
            big = await client.call_tool("read_file", {"session_id": sid, "path": "big.txt"})
            missing = await client.call_tool("read_file", {"session_id": sid, "path": "nope.txt"})
            return listed, text, binary, big, missing

    listed, text, binary, big, missing = asyncio.run(scenario())
    paths = {f["path"]: f for f in listed.structured_content["files"]}
    assert {"notes.txt", "blob.bin", "big.txt"} <= set(paths)
    assert text.structured_content == {
        "path": "notes.txt",
        "size": 6,
        "text": "héllo",
        "content_base64": None,
    }
    assert base64.b64decode(binary.structured_content["content_base64"]) == bytes(range(256))
    assert binary.structured_content["text"] is None
    assert big.is_error and "at most 16 KiB" in text_of(big)
    assert missing.is_error and "no file 'nope.txt'" in text_of(missing)


def test_an_analysis_runs_again_with_other_parameters(web, alice_token):
    """run_analysis: the session's cells replayed in a fresh kernel, parameter() returning the
    value given; an unknown parameter is a tool error, and nothing runs."""

    async def scenario():
        async with http_client(web, alice_token) as client:
            sid = (await client.call_tool("create_session", {})).structured_content["session_id"]
            await client.call_tool("run_python", {"session_id": sid, "code": "n = 2"})
            by_hand = await client.call_tool(
                "run_python", {"session_id": sid, "code": "print(n * parameter('k', 10))"}
            )
            ran = await client.call_tool("run_analysis", {"session_id": sid, "parameters": {"k": 5}})
            refused = await client.call_tool("run_analysis", {"session_id": sid, "parameters": {"j": 5}})
            listed = (await client.call_tool("list_sessions", {})).structured_content
            return sid, by_hand, ran, refused, listed

    sid, by_hand, ran, refused, listed = asyncio.run(scenario())
    assert by_hand.structured_content["stdout"] == "20\n"
    assert not ran.is_error, text_of(ran)
    run = ran.structured_content
    assert run["status"] == "done" and run["parameters"] == {"k": 5} and run["stdout"] == "10\n"
    assert [cell["index"] for cell in run["cells"]] == [None, 1, 2]
    assert run["url"].startswith(f"{web}/sessions/") and sid not in run["url"]
    assert refused.is_error and "unknown parameter 'j'; this analysis has: k" in text_of(refused)
    assert [s["session_id"] for s in listed["sessions"]] == [sid]  # the run's session is not listed
