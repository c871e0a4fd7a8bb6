"""MCP sessions over HTTP (Mcp-Session-Id) are bounded: one token opened 300 in 9 s, and 1,000 held
31 MiB of the web process for good. Each user may hold ANALYST_MCP_SESSIONS_PER_USER (past it a
JSON-RPC error at HTTP 429), the process ANALYST_MCP_SESSIONS in all (the SDK's 503), and a
session left without a request for ANALYST_MCP_SESSION_IDLE seconds is closed (its id answers 404),
which gives its place back. Sessions are what clients of the handshake-era protocol hold (the
official client with mode="legacy", as clients before 2026 speak); a request of the 2026 protocol
stands alone and holds none, so it is not counted. Driven by the official client against the real
web server."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterator

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.mcp.conftest import CLIENT, token_of
from tests.web_process import web_server


@pytest.fixture(scope="module")
def capped_web(app_env: dict[str, str]) -> Iterator[str]:
    env = {**app_env, "ANALYST_MCP_SESSIONS_PER_USER": "2", "ANALYST_MCP_SESSIONS": "3"}
    with web_server(env, name="mcp-caps") as url:
        yield url


@pytest.fixture(scope="module")
def idling_web(app_env: dict[str, str]) -> Iterator[str]:
    env = {**app_env, "ANALYST_MCP_SESSIONS_PER_USER": "1", "ANALYST_MCP_SESSION_IDLE": "1"}
    with web_server(env, name="mcp-idle") as url:
        yield url


@contextlib.asynccontextmanager
async def connected(
    web: str,
    token: str,
    answers: list[httpx2.Response] | None = None,
    *,
    delete_on_close: bool = True,
    mode: str = "legacy",
) -> AsyncIterator[Client]:
    """The official client over Streamable HTTP, with a session of its own (the initialize
    handshake) unless ``mode`` says otherwise; ``answers`` collects each response."""

    async def note(response: httpx2.Response) -> None:
        if answers is not None:
            answers.append(response)

    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=60, event_hooks={"response": [note]}) as http:
        transport = streamable_http_client(f"{web}/mcp", http_client=http, terminate_on_close=delete_on_close)
        async with Client(transport, client_info=CLIENT, mode=mode) as client:
            yield client


def mcp_error(exc: BaseException) -> MCPError | None:
    """The MCPError in ``exc``, which the client's task groups may have wrapped in groups."""
    if isinstance(exc, MCPError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        return next((found for e in exc.exceptions if (found := mcp_error(e))), None)
    return None


async def try_opening(web: str, token: str) -> tuple[int, MCPError | None]:
    """Open a session and use it: the last HTTP status, and the JSON-RPC error if it was refused."""
    answers: list[httpx2.Response] = []
    try:
        async with connected(web, token, answers) as client:
            await client.list_tools()
    except Exception as exc:
        if (error := mcp_error(exc)) is None:
            raise
        return answers[-1].status_code, error
    return answers[-1].status_code, None


async def refused(web: str, token: str) -> tuple[int, str]:
    """Opening a session that is refused: the HTTP status and the JSON-RPC error's message."""
    status, error = await try_opening(web, token)
    assert error is not None, f"the session was opened ({status})"
    return status, str(error)


def test_each_user_holds_at_most_their_share_and_the_process_its_total(capped_web, transactional_db):
    alice, bob, carol = token_of("alice"), token_of("bob"), token_of("carol")

    async def scenario() -> None:
        async with contextlib.AsyncExitStack() as held:
            first = await held.enter_async_context(connected(capped_web, alice))
            await held.enter_async_context(connected(capped_web, alice))
            status, message = await refused(capped_web, alice)
            assert status == 429
            assert message.startswith("You have 2 MCP sessions open, the most one user may hold;")
            assert (await first.list_tools()).tools, "her open sessions still work"
            async with connected(capped_web, alice, mode="auto") as sessionless:  # the 2026 protocol
                assert (await sessionless.list_tools()).tools, "a request opening no session is not refused"

            async with connected(capped_web, bob):  # another user's share is his own
                status, message = await refused(capped_web, carol)  # but three is the total
                assert status == 503 and message == "Too many open sessions"

        # Ended (the client deletes its session on leaving): her places are free again.
        async with connected(capped_web, alice), connected(capped_web, alice):
            pass

    asyncio.run(scenario())


def test_a_session_left_idle_is_closed_and_gives_its_place_back(idling_web, transactional_db):
    alice = token_of("alice")

    async def scenario() -> str:
        answers: list[httpx2.Response] = []
        # A client that goes away without ending its session, as a killed process does.
        async with connected(idling_web, alice, answers, delete_on_close=False) as client:
            await client.list_tools()
        abandoned = next(a.headers["mcp-session-id"] for a in answers if "mcp-session-id" in a.headers)
        status, _ = await refused(idling_web, alice)
        assert status == 429, "the abandoned session holds her one place"
        deadline = time.monotonic() + 60
        while (await try_opening(idling_web, alice))[1] is not None:  # until it idles out (1 s)
            assert time.monotonic() < deadline, "the idle session was never closed"
            await asyncio.sleep(0.5)
        return abandoned

    abandoned = asyncio.run(scenario())
    headers = {
        "Authorization": f"Bearer {alice}",
        "Mcp-Session-Id": abandoned,
        "Accept": "text/event-stream",
    }
    assert httpx.get(f"{idling_web}/mcp", headers=headers, timeout=10).status_code == 404
