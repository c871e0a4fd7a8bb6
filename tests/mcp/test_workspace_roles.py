"""The workspace's rules over MCP, through the official client: each role and a stranger call every
tool on a team session, and a member removed while their call waits on its cell is cut off at
once (the call ends with a tool error and the cell is stopped)."""

from __future__ import annotations

import asyncio
import time

import pytest
from django.contrib.auth import get_user_model
from mcp.types import TextContent

from analyst.models import AnalysisSession, Membership, Turn, Workspace
from analyst.models.workspaces import Role
from tests.mcp.conftest import http_client, off_the_loop, token_of

ROLES = {"olga": Role.OWNER, "adam": Role.ADMIN, "eve": Role.EDITOR, "vic": Role.VIEWER}
VIEWER_REFUSAL = "viewers may read this session, not change it: ask an editor or an admin of Team"


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


@pytest.fixture
def team(stack) -> tuple[str, dict[str, str]]:
    """The workspace Team with a member of each role, and mallory, a stranger: its session's id,
    and each one's API token."""
    tokens = {name: token_of(name) for name in [*ROLES, "mallory"]}
    people = {person.username: person for person in get_user_model().objects.all()}
    workspace = Workspace.objects.create(name="Team")
    for name, role in ROLES.items():
        Membership.objects.create(workspace=workspace, user=people[name], role=role)
    session = AnalysisSession.objects.create(
        owner=people["olga"], workspace=workspace, model="anthropic/claude-test", title="Q3"
    )
    return str(session.id), tokens


def calls_of(sid: str) -> dict[str, tuple[str, dict]]:
    """Each tool that names a session, with arguments it accepts after its check: what a tool
    would change is bad input for an allowed caller (an empty upload), so nothing runs."""
    return {
        "list_files": ("list_files", {"session_id": sid}),
        "read_file": ("read_file", {"session_id": sid, "path": "data/none.csv"}),
        "upload_file": ("upload_file", {"session_id": sid, "name": "x.csv", "content_base64": "!"}),
        "run_python": ("run_python", {"session_id": sid, "code": "1"}),
        "ask": ("ask", {"session_id": sid, "question": "hi"}),
        "run_analysis": ("run_analysis", {"session_id": sid, "parameters": {}}),
    }


CHANGES = {"upload_file", "run_python", "ask", "run_analysis"}


@pytest.mark.parametrize("persona", [*ROLES, "mallory"])
def test_each_role_and_a_stranger_on_every_tool(web, team, persona):
    sid, tokens = team
    token = tokens[persona]

    async def scenario():
        async with http_client(web, token) as client:
            results = {}
            for tool, (name, arguments) in calls_of(sid).items():
                if persona in {"olga", "adam", "eve"} and tool in {"run_python", "ask"}:
                    continue  # they may: their turns are the other MCP tests' subject
                results[tool] = await client.call_tool(name, arguments)
            return results

    results = asyncio.run(scenario())
    for tool, result in results.items():
        said = text_of(result)
        if persona == "mallory":
            assert result.is_error and said.endswith(
                f"no session {sid!r} (it does not exist, or it is not yours)"
            )
        elif persona == "vic" and tool in CHANGES:
            assert result.is_error and said.endswith(VIEWER_REFUSAL), (tool, said)
        else:
            assert "no session" not in said and VIEWER_REFUSAL not in said, (tool, said)
    assert Turn.objects.filter(session_id=sid).count() == 0, "no refused call started a turn"


def test_a_member_removed_while_their_call_waits_is_cut_off_at_once(web, team):
    sid, tokens = team

    async def scenario():
        async with http_client(web, tokens["eve"]) as client:
            # a cell longer than the test: only the cut can end the call
            call = asyncio.create_task(
                client.call_tool("run_python", {"session_id": sid, "code": "import time; time.sleep(3600)"})
            )
            status = Turn.Status.QUEUED
            while status == Turn.Status.QUEUED:
                await asyncio.sleep(0.1)
                found = await off_the_loop(
                    Turn.objects.filter(session_id=sid).values_list("status", flat=True).first
                )
                status = found or Turn.Status.QUEUED
            assert status == Turn.Status.RUNNING, f"the turn did not run: {status}"
            await off_the_loop(Membership.objects.filter(user__username="eve").delete)
            return await call

    result = asyncio.run(scenario())
    assert result.is_error
    assert "you may no longer read this session" in text_of(result)
    turn = Turn.objects.get(session_id=sid)
    deadline = time.monotonic() + 30
    while turn.status not in Turn.FINISHED and time.monotonic() < deadline:
        time.sleep(0.2)
        turn.refresh_from_db()
    assert turn.status == Turn.Status.CANCELLED
