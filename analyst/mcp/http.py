"""/mcp: the tools over Streamable HTTP, in the web server's own ASGI app, for the holder of an API
token (``Authorization: Bearer <token>``, as the JSON API): every request acts as its token's user,
and a missing, wrong or revoked token is a 401 before the MCP layer sees anything. The sessions
(Mcp-Session-Id) this process holds are bounded per user (ANALYST_MCP_SESSIONS_PER_USER, 429 past
it) and in all (ANALYST_MCP_SESSIONS, the SDK's 503), and closed after ANALYST_MCP_SESSION_IDLE
seconds without a request (the SDK's idle timeout; the id then answers 404)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings
from django.http.request import split_domain_port, validate_host
from mcp.server.mcpserver import Context
from mcp.server.transport_security import TransportSecuritySettings

from analyst.accounts.api_tokens import user_from_authorization
from analyst.lib.raw_asgi import Headers, header, respond
from analyst.mcp.open_sessions import OpenSessions, opens_a_session
from analyst.mcp.server import build

PATH = "/mcp"
Scope = dict[str, Any]
# JSON-RPC's range for errors an implementation defines; the body has no id (as the SDK's own
# refusals before a session exists): the request was refused before it was read.
SESSIONS_PER_USER_ERROR = -32000


class McpEndpoint:
    """The ASGI app at /mcp. The SDK's session manager runs from the first request on, in a task
    of the server's loop (the web server runs without ASGI lifespan events)."""

    def __init__(self) -> None:
        self.server = build(self.caller)
        # Hosts are checked here against ALLOWED_HOSTS, as Django does; a bearer token (never a
        # cookie) is what DNS rebinding cannot borrow.
        self.app = self.server.streamable_http_app(
            streamable_http_path=PATH,
            max_request_body_size=settings.ANALYST_MCP_MAX_UPLOAD * 4 // 3 + (1 << 20),
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            session_idle_timeout=settings.ANALYST_MCP_SESSION_IDLE or None,
            max_sessions=settings.ANALYST_MCP_SESSIONS or None,
        )
        self.sessions = OpenSessions(self.is_open)
        self.running: asyncio.Future[None] | None = None
        self.holder: asyncio.Task[None] | None = None

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        domain, _ = split_domain_port(header(scope, b"host"))
        if not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
            await answer(send, 400, "bad_host", "this host is not in ALLOWED_HOSTS")
            return
        user = await database_sync_to_async(user_from_authorization)(header(scope, b"authorization"))
        if user is None:
            message = "send Authorization: Bearer <an API token> (made on the API tokens page)"
            await answer(send, 401, "unauthorized", message, [(b"www-authenticate", b'Bearer realm="mcp"')])
            return
        scope["analyst_user"] = user
        await self.start()
        if not opens_a_session(scope):
            await self.app(scope, receive, send)
            return
        most = settings.ANALYST_MCP_SESSIONS_PER_USER
        if most and self.sessions.held(user.pk) >= most:
            await too_many_sessions(send, most)
            return
        with self.sessions.opening_for(user.pk):
            await self.app(scope, receive, self.sessions.noting(user.pk, send))

    async def start(self) -> None:
        if self.running is None:
            self.running = asyncio.get_running_loop().create_future()
            self.holder = asyncio.create_task(self.hold(self.running))
        await self.running

    async def hold(self, running: asyncio.Future[None]) -> None:
        try:
            async with self.server.session_manager.run():
                running.set_result(None)
                await asyncio.Event().wait()  # for the life of the process
        except BaseException as exc:
            if not running.done():  # the requests waiting for it fail, rather than hang
                running.set_exception(exc)
            raise

    def is_open(self, session_id: str) -> bool:
        # The SDK's manager is the truth of which sessions are open: it forgets one the client
        # deleted, or that idled out, and has no public way to say so (mcp 2.3).
        return session_id in self.server.session_manager._server_instances

    @staticmethod
    async def caller(ctx: Context) -> tuple[Any, str]:
        request = ctx.request_context.request
        return request.scope["analyst_user"], str(request.base_url).rstrip("/")


async def answer(send: Any, status: int, code: str, message: str, extra: Headers = ()) -> None:
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    await respond(send, status, body, b"application/json", extra)


async def too_many_sessions(send: Any, most: int) -> None:
    message = (
        f"You have {most} MCP sessions open, the most one user may hold; end one (DELETE it, or close"
        " its client) or let one idle out, then connect again."
    )
    error = {"code": SESSIONS_PER_USER_ERROR, "message": message, "data": {"limit": most}}
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
    await respond(send, 429, body, b"application/json")


def with_mcp(django_app: Any) -> Any:
    """``django_app``, with /mcp served by the MCP endpoint."""
    endpoint = McpEndpoint()

    async def app(scope: Scope, receive: Any, send: Any) -> None:
        if scope["path"] == PATH or scope["path"].startswith(PATH + "/"):
            await endpoint(scope, receive, send)
        else:
            await django_app(scope, receive, send)

    return app
