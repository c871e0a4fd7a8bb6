"""The asyncio SDK: AsyncSandbox, AsyncCodeContext and AsyncFiles over one httpx.AsyncClient.

Same methods, arguments, returns and errors as the blocking SDK in sync.py; handlers may be
plain functions or coroutines.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import AsyncIterable, AsyncIterator
from typing import IO, Any

import httpx

from sandboxes.client.connection import (
    SNAPSHOT_TIMEOUT,
    ConnectionConfig,
    raise_for_status,
    translate_errors,
)
from sandboxes.client.payloads import (
    Listing,
    RestoreReport,
    Resumed,
    SandboxInfo,
    SnapshotInfo,
    TablePreview,
    VariableList,
    WriteInfo,
    create_body,
    create_headers,
    execute_body,
    list_files_params,
    list_params,
    restore_body,
)
from sandboxes.client.sync import FILE_CHUNK, remaining_length
from sandboxes.execution import Execution, Handlers, apply_event, parse_event


class _AsyncApi:
    def __init__(self, config: ConnectionConfig, http: httpx.AsyncClient | None = None) -> None:
        self.config = config
        self.http = http or httpx.AsyncClient(**config.client_options())

    async def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        with translate_errors():
            response = await self.http.request(method, path, **kwargs)
        raise_for_status(response)
        return response

    @contextlib.asynccontextmanager
    async def closed_on_error(self) -> AsyncIterator[None]:
        try:
            yield
        except BaseException:
            await self.http.aclose()
            raise

    @contextlib.asynccontextmanager
    async def _stream(self, method: str, path: str, **kwargs: Any) -> AsyncIterator[httpx.Response]:
        with translate_errors():
            async with self.http.stream(method, path, **kwargs) as response:
                if response.status_code >= 400:
                    await response.aread()
                    raise_for_status(response)
                yield response

    async def stream_lines(self, method: str, path: str, **kwargs: Any) -> AsyncIterator[str]:
        async with self._stream(method, path, **kwargs) as response:
            async for line in response.aiter_lines():
                if line:
                    yield line

    async def stream_bytes(self, method: str, path: str, **kwargs: Any) -> AsyncIterator[bytes]:
        async with self._stream(method, path, **kwargs) as response:
            async for chunk in response.aiter_bytes():
                yield chunk


class AsyncSandbox:
    """The asyncio twin of Sandbox."""

    def __init__(
        self, info: SandboxInfo, api: _AsyncApi, restore_report: RestoreReport | None = None
    ) -> None:
        self._api = api
        self._info = info
        self.sandbox_id = info.sandbox_id
        self.files = AsyncFiles(self)
        self.restore_report = restore_report

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
        async with api.closed_on_error():
            response = await api.request(
                "POST",
                "/sandboxes",
                json=create_body(template, ttl_seconds, metadata),
                headers=create_headers(idempotency_key),
            )
        return cls(SandboxInfo.from_json(response.json()), api)

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
        async with api.closed_on_error():
            response = await api.request(
                "POST", f"/sandboxes/{sandbox_id}/connect", timeout=api.config.timeout(SNAPSHOT_TIMEOUT)
            )
        return cls(SandboxInfo.from_json(response.json()), api)

    @classmethod
    async def kill_by_id(cls, sandbox_id: str, *, url: str | None = None, token: str | None = None) -> None:
        """See Sandbox.kill_by_id: a paused sandbox is not resumed first."""
        api = _AsyncApi(ConnectionConfig.resolve(url, token))
        try:
            await api.request("DELETE", f"/sandboxes/{sandbox_id}")
        finally:
            await api.http.aclose()

    @classmethod
    async def list(
        cls, metadata: dict[str, str] | None = None, *, url: str | None = None, token: str | None = None
    ) -> list[SandboxInfo]:
        api = _AsyncApi(ConnectionConfig.resolve(url, token))
        try:
            body = (await api.request("GET", "/sandboxes", params=list_params(metadata))).json()
        finally:
            await api.http.aclose()
        return [SandboxInfo.from_json(item) for item in body["sandboxes"]]

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
        async with api.closed_on_error():
            response = await api.request(
                "POST",
                f"/snapshots/{snapshot_id}/restore",
                json=restore_body(ttl_seconds, metadata, replay, paused),
                timeout=api.config.timeout(SNAPSHOT_TIMEOUT),
            )
        return cls._restored(response.json(), api)

    @classmethod
    def _restored(cls, body: dict[str, Any], api: _AsyncApi) -> AsyncSandbox:
        return cls(SandboxInfo.from_json(body), api, RestoreReport.from_json(body.get("restore")))

    @classmethod
    async def get_snapshot(
        cls, snapshot_id: str, *, url: str | None = None, token: str | None = None
    ) -> SnapshotInfo:
        api = _AsyncApi(ConnectionConfig.resolve(url, token))
        try:
            return SnapshotInfo.from_json((await api.request("GET", f"/snapshots/{snapshot_id}")).json())
        finally:
            await api.http.aclose()

    @classmethod
    async def delete_snapshot(
        cls, snapshot_id: str, *, url: str | None = None, token: str | None = None
    ) -> None:
        api = _AsyncApi(ConnectionConfig.resolve(url, token))
        try:
            await api.request("DELETE", f"/snapshots/{snapshot_id}")
        finally:
            await api.http.aclose()

    @property
    def metadata(self) -> dict[str, str]:
        return self._info.metadata

    @property
    def template(self) -> str:
        return self._info.template

    @property
    def default_context(self) -> AsyncCodeContext:
        return AsyncCodeContext(self, self._info.default_context_id)

    async def get_info(self) -> SandboxInfo:
        response = await self._api.request("GET", f"/sandboxes/{self.sandbox_id}")
        self._info = SandboxInfo.from_json(response.json())
        return self._info

    @property
    def resumed(self) -> Resumed | None:
        return self._info.resumed

    async def resume(self) -> SandboxInfo:
        """See Sandbox.resume."""
        response = await self._api.request(
            "POST",
            f"/sandboxes/{self.sandbox_id}/connect",
            timeout=self._api.config.timeout(SNAPSHOT_TIMEOUT),
        )
        self._info = SandboxInfo.from_json(response.json())
        return self._info

    async def pause(self) -> SandboxInfo:
        """See Sandbox.pause."""
        response = await self._api.request(
            "POST", f"/sandboxes/{self.sandbox_id}/pause", timeout=self._api.config.timeout(SNAPSHOT_TIMEOUT)
        )
        self._info = SandboxInfo.from_json(response.json())
        return self._info

    async def create_code_context(self) -> AsyncCodeContext:
        body = (await self._api.request("POST", f"/sandboxes/{self.sandbox_id}/contexts")).json()
        return AsyncCodeContext(self, body["id"])

    async def run_code(
        self, code: str, *, context: AsyncCodeContext | None = None, **options: Any
    ) -> Execution:
        return await (context or self.default_context).run_code(code, **options)

    async def snapshot(self) -> SnapshotInfo:
        response = await self._api.request(
            "POST",
            f"/sandboxes/{self.sandbox_id}/snapshots",
            timeout=self._api.config.timeout(SNAPSHOT_TIMEOUT),
        )
        return SnapshotInfo.from_json(response.json())

    async def fork(
        self, *, ttl_seconds: int | None = None, metadata: dict[str, str] | None = None
    ) -> AsyncSandbox:
        response = await self._api.request(
            "POST",
            f"/sandboxes/{self.sandbox_id}/fork",
            json=restore_body(ttl_seconds, metadata, False),
            timeout=self._api.config.timeout(SNAPSHOT_TIMEOUT),
        )
        return self._restored(response.json(), _AsyncApi(self._api.config))

    async def set_ttl(self, seconds: int) -> None:
        await self._api.request("POST", f"/sandboxes/{self.sandbox_id}/ttl", json={"ttl_seconds": seconds})

    async def kill(self) -> None:
        await self._api.request("DELETE", f"/sandboxes/{self.sandbox_id}")

    async def close(self) -> None:
        await self._api.http.aclose()

    async def __aenter__(self) -> AsyncSandbox:
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            await self.kill()
        finally:
            await self.close()


class AsyncCodeContext:
    def __init__(self, sandbox: AsyncSandbox, context_id: str) -> None:
        self.sandbox = sandbox
        self.id = context_id
        self._path = f"/sandboxes/{sandbox.sandbox_id}/contexts/{context_id}"

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
        api = self.sandbox._api
        handlers = Handlers(on_stdout, on_stderr, on_result, on_error)
        execution = Execution()
        lines = api.stream_lines(
            "POST",
            f"{self._path}/execute",
            json=execute_body(code, timeout),
            timeout=api.config.execution_timeout(timeout, request_timeout),
        )
        # An async generator is never closed by the garbage collector in time: close it ourselves.
        async with contextlib.aclosing(lines):
            async for line in lines:
                outcome = apply_event(execution, parse_event(line), handlers)
                if inspect.isawaitable(outcome):
                    await outcome
        return execution

    async def interrupt(self) -> bool:
        return bool(
            (await self.sandbox._api.request("POST", f"{self._path}/interrupt")).json()["interrupted"]
        )

    async def restart(self) -> None:
        await self.sandbox._api.request("POST", f"{self._path}/restart")

    async def variables(self) -> VariableList:
        """As CodeContext.variables."""
        response = await self.sandbox._api.request("GET", f"{self._path}/variables")
        return VariableList.from_json(response.json())

    async def preview(self, name: str, rows: int = 20) -> TablePreview:
        """As CodeContext.preview."""
        path = f"{self._path}/variables/{name}"
        response = await self.sandbox._api.request("GET", path, params={"rows": rows})
        return TablePreview.from_json(response.json())

    async def close(self) -> None:
        await self.sandbox._api.request("DELETE", self._path)


class AsyncFiles:
    def __init__(self, sandbox: AsyncSandbox) -> None:
        self._api = sandbox._api
        self._path = f"/sandboxes/{sandbox.sandbox_id}/files"

    async def write(self, path: str, data: bytes | str | IO[bytes] | AsyncIterable[bytes]) -> WriteInfo:
        content, headers = _as_content(data)
        response = await self._api.request(
            "PUT", self._path, params={"path": path}, content=content, headers=headers
        )
        return WriteInfo.from_json(response.json())

    async def read(self, path: str, format: str = "text") -> str | bytes:
        content = (await self._api.request("GET", self._path, params={"path": path})).content
        return content if format == "bytes" else content.decode()

    def read_chunks(self, path: str) -> AsyncIterator[bytes]:
        """The file's bytes as they arrive, for a file too large to hold whole. Raises FileNotFound
        once iterated."""
        return self._api.stream_bytes("GET", self._path, params={"path": path})

    async def remove(self, path: str) -> None:
        """Delete the file, or the folder with all it holds, at ``path``. Raises FileNotFound."""
        await self._api.request("DELETE", self._path, params={"path": path})

    async def list(self, path: str = ".", *, limit: int | None = None, cursor: str | None = None) -> Listing:
        """As Files.list: one page of the folder at ``path``, a list with ``truncated`` and
        ``next_cursor``."""
        params = list_files_params(path, limit, cursor)
        body = (await self._api.request("GET", f"{self._path}/list", params=params)).json()
        return Listing.from_json(body)


def _as_content(
    data: bytes | str | IO[bytes] | AsyncIterable[bytes],
) -> tuple[bytes | AsyncIterator[bytes], dict[str, str]]:
    """As the blocking SDK's _upload_body: a regular file's length declared, read in FILE_CHUNK pieces."""
    if isinstance(data, str):
        return data.encode(), {}
    if isinstance(data, bytes):
        return data, {}
    if hasattr(data, "read"):
        length = remaining_length(data)  # type: ignore[arg-type]
        headers = {} if length is None else {"Content-Length": str(length)}
        return _read_chunks(data), headers  # type: ignore[arg-type]
    return aiter(data), {}  # type: ignore[arg-type]


async def _read_chunks(stream: IO[bytes]) -> AsyncIterator[bytes]:
    while chunk := stream.read(FILE_CHUNK):
        yield chunk
