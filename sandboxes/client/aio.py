"""The asyncio SDK: AsyncSandbox, AsyncCodeContext and AsyncFiles over one httpx.AsyncClient.

Same methods, arguments, returns and errors as the blocking SDK in sync.py; handlers may be
plain functions or coroutines.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import AsyncIterable, AsyncIterator
from typing import IO, Any, TypeVar

import httpx

from sandboxes.client import routes
from sandboxes.client.base import BaseSandbox
from sandboxes.client.call import Call, Request
from sandboxes.client.connection import ConnectionConfig, raise_for_status, translate_errors
from sandboxes.client.payloads import (
    Listing,
    RestoreReport,
    SandboxInfo,
    SnapshotInfo,
    TablePreview,
    TableRows,
    VariableList,
    WriteInfo,
)
from sandboxes.client.upload import FILE_CHUNK, upload_body
from sandboxes.execution import Execution, Handlers, apply_event, parse_event

T = TypeVar("T")


class _AsyncApi:
    """One sandboxd connection: calls, streamed answers, translated errors."""

    def __init__(self, config: ConnectionConfig, http: httpx.AsyncClient | None = None) -> None:
        self.config = config
        self.http = http or httpx.AsyncClient(**config.client_options())

    async def send(self, request: Request) -> httpx.Response:
        with translate_errors():
            response = await self.http.request(request.method, request.path, **request.options())
        raise_for_status(response)
        return response

    async def call(self, call: Call[T]) -> T:
        return call.read(await self.send(call.request))

    async def call_first(self, call: Call[T]) -> T:
        """The first call of a new AsyncSandbox's connection, which is closed if the request fails."""
        try:
            response = await self.send(call.request)
        except BaseException:
            await self.http.aclose()
            raise
        return call.read(response)

    async def call_once(self, call: Call[T]) -> T:
        """The one call of a connection made for it, closed after."""
        try:
            return await self.call(call)
        finally:
            await self.http.aclose()

    @contextlib.asynccontextmanager
    async def _stream(self, request: Request) -> AsyncIterator[httpx.Response]:
        with translate_errors():
            async with self.http.stream(request.method, request.path, **request.options()) as response:
                if response.status_code >= 400:
                    await response.aread()
                    raise_for_status(response)
                yield response

    async def stream_lines(self, request: Request) -> AsyncIterator[str]:
        async with self._stream(request) as response:
            async for line in response.aiter_lines():
                if line:
                    yield line

    async def stream_bytes(self, request: Request) -> AsyncIterator[bytes]:
        async with self._stream(request) as response:
            async for chunk in response.aiter_bytes():
                yield chunk


class AsyncSandbox(BaseSandbox):
    """The asyncio twin of Sandbox."""

    def __init__(
        self, info: SandboxInfo, api: _AsyncApi, restore_report: RestoreReport | None = None
    ) -> None:
        self._api = api
        super().__init__(info, restore_report)
        self.files = AsyncFiles(self)

    @classmethod
    async def create(
        cls,
        template: str = "code-interpreter",
        ttl_seconds: int | None = None,
        metadata: dict[str, str] | None = None,
        *,
        url: str | None = None,
        token: str | None = None,
        request_timeout: float | None = None,
        idempotency_key: str | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> AsyncSandbox:
        """See Sandbox.create, ``idempotency_key`` included."""
        api = _AsyncApi(ConnectionConfig.resolve(url, token, request_timeout), http_client)
        return cls(await api.call_first(routes.create(template, ttl_seconds, metadata, idempotency_key)), api)

    @classmethod
    async def connect(
        cls,
        sandbox_id: str,
        *,
        url: str | None = None,
        token: str | None = None,
        request_timeout: float | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> AsyncSandbox:
        """See Sandbox.connect: a paused sandbox is resumed."""
        api = _AsyncApi(ConnectionConfig.resolve(url, token, request_timeout), http_client)
        return cls(await api.call_first(routes.connect(sandbox_id)), api)

    @classmethod
    async def kill_by_id(cls, sandbox_id: str, *, url: str | None = None, token: str | None = None) -> None:
        """See Sandbox.kill_by_id: a paused sandbox is not resumed first."""
        await _AsyncApi(ConnectionConfig.resolve(url, token)).call_once(routes.kill(sandbox_id))

    @classmethod
    async def list(
        cls, metadata: dict[str, str] | None = None, *, url: str | None = None, token: str | None = None
    ) -> list[SandboxInfo]:
        """See Sandbox.list: the sandboxes, running and paused, whose metadata contains ``metadata``."""
        return await _AsyncApi(ConnectionConfig.resolve(url, token)).call_once(
            routes.list_sandboxes(metadata)
        )

    @classmethod
    async def restore(
        cls,
        snapshot_id: str,
        *,
        ttl_seconds: int | None = None,
        metadata: dict[str, str] | None = None,
        replay: bool = False,
        paused: bool = False,
        url: str | None = None,
        token: str | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> AsyncSandbox:
        """See Sandbox.restore."""
        api = _AsyncApi(ConnectionConfig.resolve(url, token), http_client)
        info, report = await api.call_first(
            routes.restore(snapshot_id, ttl_seconds, metadata, replay, paused)
        )
        return cls(info, api, report)

    @classmethod
    async def get_snapshot(
        cls, snapshot_id: str, *, url: str | None = None, token: str | None = None
    ) -> SnapshotInfo:
        """See Sandbox.get_snapshot: the snapshot's record. Raises SnapshotNotFound."""
        return await _AsyncApi(ConnectionConfig.resolve(url, token)).call_once(
            routes.get_snapshot(snapshot_id)
        )

    @classmethod
    async def delete_snapshot(
        cls, snapshot_id: str, *, url: str | None = None, token: str | None = None
    ) -> None:
        """See Sandbox.delete_snapshot: raises SnapshotNotFound if there is no such snapshot."""
        await _AsyncApi(ConnectionConfig.resolve(url, token)).call_once(routes.delete_snapshot(snapshot_id))

    @property
    def default_context(self) -> AsyncCodeContext:
        """The context the sandbox started with, which run_code uses unless given another."""
        return AsyncCodeContext(self, self._info.default_context_id)

    async def get_info(self) -> SandboxInfo:
        """See Sandbox.get_info: how the sandbox is now; looking does not resume it."""
        return self._heard(await self._api.call(routes.get_info(self.sandbox_id)))

    async def resume(self) -> SandboxInfo:
        """See Sandbox.resume."""
        return self._heard(await self._api.call(routes.connect(self.sandbox_id)))

    async def pause(self) -> SandboxInfo:
        """See Sandbox.pause."""
        return self._heard(await self._api.call(routes.pause(self.sandbox_id)))

    async def create_code_context(self) -> AsyncCodeContext:
        """See Sandbox.create_code_context: a new kernel sharing the files, not the variables."""
        return AsyncCodeContext(self, await self._api.call(routes.create_context(self.sandbox_id)))

    async def run_code(
        self, code: str, *, context: AsyncCodeContext | None = None, **options: Any
    ) -> Execution:
        """Run ``code`` in ``context`` (default: the first context); see AsyncCodeContext.run_code."""
        return await (context or self.default_context).run_code(code, **options)

    async def snapshot(self) -> SnapshotInfo:
        """See Sandbox.snapshot: raises ContextBusy while a cell runs, SnapshotTooLarge over the limit."""
        return await self._api.call(routes.snapshot(self.sandbox_id))

    async def fork(
        self, *, ttl_seconds: int | None = None, metadata: dict[str, str] | None = None
    ) -> AsyncSandbox:
        """See Sandbox.fork: a new, independent sandbox in this one's state."""
        info, report = await self._api.call(routes.fork(self.sandbox_id, ttl_seconds, metadata))
        return type(self)(info, _AsyncApi(self._api.config), report)

    async def set_ttl(self, seconds: int) -> None:
        """See Sandbox.set_ttl: expire ``seconds`` after the last use from now on."""
        await self._api.call(routes.set_ttl(self.sandbox_id, seconds))

    async def set_egress(
        self, endpoints: list[dict[str, Any]], config: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """See Sandbox.set_egress: returns ``{"proxy", "ports"}``."""
        return await self._api.call(routes.set_egress(self.sandbox_id, endpoints, config or {}))

    async def egress(self) -> dict[str, Any]:
        """See Sandbox.egress: the endpoints, proxy, ports and the last connections' log."""
        return await self._api.call(routes.egress(self.sandbox_id))

    async def check_egress(self, name: str) -> dict[str, Any]:
        """See Sandbox.check_egress: ``{"ok": True, "address"}`` or ``{"ok": False, "category",
        "message"}``."""
        return await self._api.call(routes.check_egress(self.sandbox_id, name))

    async def kill(self) -> None:
        """See Sandbox.kill. Raises SandboxNotFound if already gone."""
        await self._api.call(routes.kill(self.sandbox_id))

    async def close(self) -> None:
        """See Sandbox.close: the HTTP connection is closed, the sandbox lives on."""
        await self._api.http.aclose()

    async def __aenter__(self) -> AsyncSandbox:
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            await self.kill()
        finally:
            await self.close()


class AsyncCodeContext:
    """The asyncio twin of CodeContext: one kernel whose state persists across run_code calls."""

    def __init__(self, sandbox: AsyncSandbox, context_id: str) -> None:
        self.sandbox = sandbox
        self.id = context_id

    async def run_code(
        self,
        code: str,
        *,
        on_stdout: Any = None,
        on_stderr: Any = None,
        on_result: Any = None,
        on_error: Any = None,
        timeout: float | None = None,
        request_timeout: float | None = None,
    ) -> Execution:
        """See CodeContext.run_code. A handler (function or coroutine) that raises closes the
        stream at once, so sandboxd interrupts the cell, and its exception reaches the caller
        unwrapped."""
        handlers = Handlers(on_stdout, on_stderr, on_result, on_error)
        execution = Execution()
        request = routes.execute(self.sandbox.sandbox_id, self.id, code, timeout, request_timeout)
        lines = self.sandbox._api.stream_lines(request)
        # An async generator is never closed by the garbage collector in time: close it ourselves.
        async with contextlib.aclosing(lines):
            async for line in lines:
                outcome = apply_event(execution, parse_event(line), handlers)
                if inspect.isawaitable(outcome):
                    await outcome
        return execution

    async def interrupt(self) -> bool:
        """See CodeContext.interrupt: True once the running cell ended (by its interrupt, or by
        a restart of its kernel after the interrupt grace)."""
        return await self.sandbox._api.call(routes.interrupt(self.sandbox.sandbox_id, self.id))

    async def restart(self) -> None:
        """See CodeContext.restart: the kernel starts again with empty state (files are kept)."""
        await self.sandbox._api.call(routes.restart(self.sandbox.sandbox_id, self.id))

    async def variables(self) -> VariableList:
        """As CodeContext.variables."""
        return await self.sandbox._api.call(routes.variables(self.sandbox.sandbox_id, self.id))

    async def preview(self, name: str, rows: int = 20) -> TablePreview:
        """As CodeContext.preview."""
        return await self.sandbox._api.call(routes.preview(self.sandbox.sandbox_id, self.id, name, rows))

    async def rows(self, name: str, *, offset: int = 0, limit: int = 50, **query: Any) -> TableRows:
        """As CodeContext.rows (``query``: sort, desc, filter, token)."""
        chosen = routes.table_query(
            query.get("token"), query.get("sort"), query.get("desc", False), query.get("filter", "")
        )
        call = routes.table_rows(
            self.sandbox.sandbox_id, self.id, name, chosen | {"offset": offset, "limit": limit}
        )
        return await self.sandbox._api.call(call)

    async def close(self) -> None:
        """See CodeContext.close. Raises ContextNotFound if it is already gone."""
        await self.sandbox._api.call(routes.close_context(self.sandbox.sandbox_id, self.id))


class AsyncFiles:
    """The asyncio twin of Files: the sandbox's workdir, paths relative to it."""

    def __init__(self, sandbox: AsyncSandbox) -> None:
        self._api = sandbox._api
        self._sandbox_id = sandbox.sandbox_id

    async def write(self, path: str, data: bytes | str | IO[bytes] | AsyncIterable[bytes]) -> WriteInfo:
        """See Files.write: ``data`` may also be an async iterable of bytes. Raises InvalidPath,
        FileTooLarge, QuotaExceeded."""
        content, headers = upload_body(data, _file_chunks, aiter)
        return await self._api.call(routes.write_file(self._sandbox_id, path, content, headers))

    async def read(self, path: str, format: str = "text") -> str | bytes:
        """See Files.read: text (UTF-8) or, with format="bytes", bytes. Raises FileNotFound."""
        return await self._api.call(routes.read_file(self._sandbox_id, path, format))

    def read_chunks(self, path: str) -> AsyncIterator[bytes]:
        """See Files.read_chunks: the file's bytes as they arrive, iterated with ``async for``.
        Raises FileNotFound once iterated."""
        return self._api.stream_bytes(routes.read_chunks(self._sandbox_id, path))

    async def remove(self, path: str) -> None:
        """See Files.remove: the file, or the folder with all it holds, is deleted. Raises FileNotFound."""
        await self._api.call(routes.remove_file(self._sandbox_id, path))

    async def list(self, path: str = ".", *, limit: int | None = None, cursor: str | None = None) -> Listing:
        """As Files.list: one page of the folder at ``path``, a list with ``truncated`` and
        ``next_cursor``."""
        return await self._api.call(routes.list_files(self._sandbox_id, path, limit, cursor))


async def _file_chunks(stream: IO[bytes]) -> AsyncIterator[bytes]:
    while chunk := stream.read(FILE_CHUNK):
        yield chunk
