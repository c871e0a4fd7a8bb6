"""The analyst's MCP tools, declared with the official SDK. Who calls is decided by the transport
(``Caller``): the bearer token of each HTTP request at /mcp, or ANALYST_API_TOKEN over stdio."""

from __future__ import annotations

import base64
import functools
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from channels.db import database_sync_to_async
from django.conf import settings
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult
from pydantic import BaseModel, Field

from analyst.mcp import calls, content, following
from analyst.models import Turn
from analyst.uploads import uploads

# (the user, the base URL of the session links) for the request in hand.
Caller = Callable[[Context], Awaitable[tuple[Any, str]]]

PLACE_TIMEOUT = 120.0  # how long upload_file waits for the sandbox to read the file

INSTRUCTIONS = (
    "Each session is a persistent, isolated Python kernel with pandas, numpy, matplotlib, duckdb"
    " and polars, and no network but your connections (databases, stores, APIs) given to create_session."
    " Create one (or list yours), upload data files into it (they land"
    " under data/), run Python with run_python (variables persist between calls; charts come back"
    " as images), or ask the session's analyst a question with ask. The session's owner can watch"
    " every call live at the session's url."
)


class SessionInfo(BaseModel):
    session_id: str
    title: str
    model: str
    url: str
    created_at: str
    updated_at: str


class SessionList(BaseModel):
    sessions: list[SessionInfo]


class UploadedFile(BaseModel):
    path: str
    description: str  # what the analyst's model is told about the file
    file: dict[str, Any]  # the files panel's entry: status, rows, columns, tables, sheets, notes


class FileList(BaseModel):
    files: list[dict[str, Any]]


class FileContent(BaseModel):
    path: str
    size: int
    text: str | None  # the content, when it is UTF-8 text
    content_base64: str | None  # else the bytes, base64-encoded


SessionId = Annotated[str, Field(description="The session's id, as create_session or list_sessions give it.")]


def build(caller: Caller) -> MCPServer:
    server = MCPServer("ai-data-analyst", instructions=INSTRUCTIONS)

    async def as_caller(ctx: Context, work: Callable[..., Any], *args: Any) -> Any:
        """``work(who, *args)`` off the loop, as the caller; a refusal is a tool error."""
        user, base_url = await caller(ctx)
        try:
            return await database_sync_to_async(work)(calls.Who(user, base_url, client_name(ctx)), *args)
        except calls.Refused as exc:
            raise ToolError(str(exc)) from None

    @server.tool()
    async def create_session(
        ctx: Context,
        title: Annotated[str | None, Field(description="A title for the session.")] = None,
        connections: Annotated[
            list[str] | None,
            Field(description="Names of your connections (databases, stores, APIs) its kernel may use."),
        ] = None,
    ) -> SessionInfo:
        """Create an analysis session: a fresh, isolated Python kernel. Returns its id and the url
        where its owner watches it live. With ``connections``, its kernel reaches those with
        sql(name, query) and connection(name)."""
        return SessionInfo(**await as_caller(ctx, calls.create_session, title, connections))

    @server.tool()
    async def list_sessions(ctx: Context) -> SessionList:
        """List your analysis sessions, newest first."""
        found = await as_caller(ctx, calls.list_sessions)
        return SessionList(sessions=[SessionInfo(**s) for s in found])

    @server.tool()
    async def upload_file(
        ctx: Context,
        session_id: SessionId,
        name: Annotated[
            str, Field(description="The file's name, such as sales.csv; it lands at data/<name>.")
        ],
        content_base64: Annotated[str, Field(description="The file's bytes, base64-encoded.")],
    ) -> UploadedFile:
        """Upload a data file into the session (CSV/TSV/TXT, Excel, parquet, JSON, JSON Lines,
        Feather/Arrow, each also gzipped, or a zip of them). Waits until the sandbox has read it,
        then returns its path and what was found in it: tables, rows, columns, types and the
        pandas call that loads it."""
        file_id = await as_caller(ctx, calls.upload, session_id, name, content_base64)
        entry = await following.placed(file_id, PLACE_TIMEOUT)
        if entry is None:
            raise ToolError(
                f"the file is uploaded but still being read after {PLACE_TIMEOUT:.0f} s; see list_files"
            )
        if entry["status"] == "failed":
            raise ToolError(f"the file could not be placed in the sandbox: {entry['error']}")
        return UploadedFile(path=entry["path"], description=entry["summary"], file=entry)

    @server.tool()
    async def run_python(
        ctx: Context,
        session_id: SessionId,
        code: Annotated[str, Field(description="Python code to run in the session's kernel.")],
    ) -> Annotated[CallToolResult, content.CellOutput]:
        """Run Python in the session's persistent kernel: variables, imports and loaded data stay
        for the next call. Returns stdout, stderr, the last expression's value and any displayed
        tables as text, and charts as PNG images; a failing cell is an error holding its
        traceback. The cell shows on the session's page as it runs."""
        return await run_turn(ctx, session_id, Turn.Kind.CELL, code, content.cell_result)

    @server.tool()
    async def ask(
        ctx: Context,
        session_id: SessionId,
        question: Annotated[str, Field(description="A question about the session's data, in any language.")],
    ) -> Annotated[CallToolResult, content.AnswerOutput]:
        """Ask the session's analyst (its language model, which writes and runs code in the same
        kernel) a question. Returns its final answer, with the charts it made as images."""
        return await run_turn(ctx, session_id, Turn.Kind.CHAT, question, content.answer_result)

    @server.tool()
    async def list_files(ctx: Context, session_id: SessionId) -> FileList:
        """List the session's files: its uploads (with what was found in them) and the files its
        code wrote."""
        return FileList(files=await as_caller(ctx, calls.list_files, session_id))

    @server.tool()
    async def read_file(
        ctx: Context,
        session_id: SessionId,
        path: Annotated[str, Field(description="The file's path in the session, as list_files gives it.")],
    ) -> FileContent:
        """Read a file of the session: its text when it is UTF-8, else its bytes as base64. Files
        over the size limit are refused (download them from the session's page)."""
        found = await as_caller(ctx, calls.download, session_id, path)
        limit = settings.ANALYST_MCP_READ_LIMIT
        if found.size is not None and found.size > limit:
            raise ToolError(too_big(path, found.size, limit))
        data = bytearray()
        async for chunk in found.chunks:
            data += chunk
            if len(data) > limit:
                await found.chunks.aclose()  # type: ignore[attr-defined]
                raise ToolError(too_big(path, None, limit))
        try:
            text: str | None = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        encoded = None if text is not None else base64.b64encode(data).decode()
        return FileContent(path=path, size=len(data), text=text, content_base64=encoded)

    async def run_turn(
        ctx: Context, session_id: str, kind: str, text: str, result: Callable[..., CallToolResult]
    ) -> CallToolResult:
        turn, after, url = await as_caller(ctx, calls.start_turn, session_id, kind, text)
        seen = await follow_as_caller(ctx, turn.id, turn.session_id, after)
        outcome = await database_sync_to_async(content.outcome)(turn.session_id, seen)
        return result(outcome, url)

    follow_as_caller = follower(caller)
    declare_runs(server, as_caller, follow_as_caller)
    return server


AsCaller = Callable[..., Awaitable[Any]]
Follow = Callable[[Context, int, object, int], Awaitable[list[dict[str, Any]]]]


def follower(caller: Caller) -> Follow:
    """How a tool waits for its turn: its events, for as long as the caller may read its session;
    a caller removed from the session's workspace meanwhile gets a tool error, and the turn stops."""

    async def follow_as_caller(
        ctx: Context, turn_id: int, session_id: object, after: int
    ) -> list[dict[str, Any]]:
        user, _ = await caller(ctx)
        access_lost = functools.partial(database_sync_to_async(calls.access_lost), user, session_id)
        try:
            return await following.follow(turn_id, session_id, after, Progress(ctx).hear, access_lost)
        except calls.Refused as exc:
            raise ToolError(str(exc)) from None

    return follow_as_caller


def declare_runs(server: MCPServer, as_caller: AsCaller, follow_as_caller: Follow) -> None:
    """The tools of runs of an analysis (analyst.runs.runs)."""

    @server.tool()
    async def run_analysis(
        ctx: Context,
        session_id: SessionId,
        parameters: Annotated[
            dict[str, Any],
            Field(description="Values of the analysis's parameters by name; the rest keep their defaults."),
        ],
    ) -> Annotated[CallToolResult, content.RunOutput]:
        """Run the session's analysis again (its cells that succeeded, in order, in a fresh
        kernel) with other values for its parameters, as a scheduled run would. Returns what
        the cells printed and drew, and each cell's outcome; a failing cell ends the run."""
        run, url = await as_caller(ctx, calls.start_run, session_id, parameters)
        seen = await follow_as_caller(ctx, run.turn_id, run.session_id, 0)
        outcome = await database_sync_to_async(content.outcome)(run.session_id, seen)
        summary = await database_sync_to_async(calls.run_summary)(run.id)
        return content.run_result(outcome, summary, url)


def too_big(path: str, size: int | None, limit: int) -> str:
    how_big = uploads.human_size(size) if size is not None else f"over {uploads.human_size(limit)}"
    return (
        f"{path} is {how_big}; read_file returns at most {uploads.human_size(limit)}"
        " (ANALYST_MCP_READ_LIMIT). Download it from the session's page instead."
    )


def client_name(ctx: Context) -> str:
    params = ctx.session.client_params
    name = params.client_info.name if params is not None and params.client_info is not None else ""
    return (name or "an MCP client")[:100]


class Progress:
    """A running turn's output as MCP progress notifications, as it comes: each message is what
    was printed (or the code about to run, or the answer so far)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx, self.count = ctx, 0

    async def hear(self, event: dict[str, Any]) -> None:
        message = self.message(event)
        if message:
            self.count += 1
            await self.ctx.report_progress(self.count, None, message[:4000])

    @staticmethod
    def message(event: dict[str, Any]) -> str:
        payload = event["payload"]
        if event["type"] in ("stdout", "stderr", "assistant_delta", "notice"):
            return str(payload.get("text", ""))
        if event["type"] == "tool_call":
            return f"running:\n{payload.get('code', '')}"
        return ""
