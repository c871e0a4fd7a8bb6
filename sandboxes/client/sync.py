"""The blocking SDK: Sandbox, CodeContext and Files over one httpx.Client."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable, Iterator
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
from sandboxes.execution import (
    ErrorHandler,
    Execution,
    Handlers,
    OutputHandler,
    ResultHandler,
    apply_event,
    parse_event,
)

# Pieces a file is read in for an upload: large enough that per-piece costs (a read, a socket
# send, sandboxd's parsing) stay small beside the bytes, small enough to hold a few at once.
FILE_CHUNK = 1 << 20


class _Api:
    """One sandboxd connection: JSON requests, streamed executions, translated errors."""

    def __init__(self, config: ConnectionConfig, http: httpx.Client | None = None) -> None:
        self.config = config
        self.http = http or httpx.Client(**config.client_options())

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        with translate_errors():
            response = self.http.request(method, path, **kwargs)
        raise_for_status(response)
        return response

    @contextlib.contextmanager
    def closed_on_error(self) -> Iterator[None]:
        try:
            yield
        except BaseException:
            self.http.close()
            raise

    @contextlib.contextmanager
    def _stream(self, method: str, path: str, **kwargs: Any) -> Iterator[httpx.Response]:
        with translate_errors(), self.http.stream(method, path, **kwargs) as response:
            if response.status_code >= 400:
                response.read()
                raise_for_status(response)
            yield response

    def stream_lines(self, method: str, path: str, **kwargs: Any) -> Iterator[str]:
        with self._stream(method, path, **kwargs) as response:
            yield from (line for line in response.iter_lines() if line)

    def stream_bytes(self, method: str, path: str, **kwargs: Any) -> Iterator[bytes]:
        with self._stream(method, path, **kwargs) as response:
            yield from response.iter_bytes()


class Sandbox:
    """A sandbox on sandboxd: files, and code contexts whose state persists across cells.

    ``Sandbox.create()`` and ``Sandbox.connect(id)`` find the service through the
    SANDBOXD_URL and SANDBOXD_TOKEN environment variables unless given ``url``/``token``.
    """

    def __init__(self, info: SandboxInfo, api: _Api, restore_report: RestoreReport | None = None) -> None:
        self._api = api
        self._info = info
        self.sandbox_id = info.sandbox_id
        self.files = Files(self)
        self.restore_report = restore_report  # for a sandbox made by restore() or fork()

    @classmethod
    def create(
        cls,
        template: str = "code-interpreter",
        ttl_seconds: int | None = None,
        metadata: dict[str, str] | None = None,
        *,
        url: str | None = None,
        token: str | None = None,
        request_timeout: float | None = None,
        idempotency_key: str | None = None,
        http_client: httpx.Client | None = None,
    ) -> Sandbox:
        """Start a sandbox (from the warm pool when one is ready). Raises SandboxError.

        With ``idempotency_key``, a create that repeats the key of a sandbox still alive (made
        with the same token) returns that sandbox instead of a new one, so a create retried
        after its answer was lost (RequestTimeout, ServiceUnavailable) adopts what the first one
        made. The key is remembered as long as its sandbox lives; ``template``, ``ttl_seconds``
        and ``metadata`` of a repeat are ignored.
        """
        api = _Api(ConnectionConfig.resolve(url, token, request_timeout), http_client)
        with api.closed_on_error():
            response = api.request(
                "POST",
                "/sandboxes",
                json=create_body(template, ttl_seconds, metadata),
                headers=create_headers(idempotency_key),
            )
        return cls(SandboxInfo.from_json(response.json()), api)

    @classmethod
    def connect(
        cls,
        sandbox_id: str,
        *,
        url: str | None = None,
        token: str | None = None,
        request_timeout: float | None = None,
        http_client: httpx.Client | None = None,
    ) -> Sandbox:
        """Attach to a sandbox, resuming it first if it was paused (its ``info.resumed`` then says
        what came back). Raises SandboxNotFound or SandboxExpired."""
        api = _Api(ConnectionConfig.resolve(url, token, request_timeout), http_client)
        with api.closed_on_error():
            response = api.request(
                "POST", f"/sandboxes/{sandbox_id}/connect", timeout=api.config.timeout(SNAPSHOT_TIMEOUT)
            )
        return cls(SandboxInfo.from_json(response.json()), api)

    @classmethod
    def pause_by_id(cls, sandbox_id: str, *, url: str | None = None, token: str | None = None) -> SandboxInfo:
        """Pause a sandbox without connecting to it first (as ``pause``); its info."""
        api = _Api(ConnectionConfig.resolve(url, token))
        try:
            path = f"/sandboxes/{sandbox_id}/pause"
            return SandboxInfo.from_json(
                api.request("POST", path, timeout=api.config.timeout(SNAPSHOT_TIMEOUT)).json()
            )
        finally:
            api.http.close()

    @classmethod
    def kill_by_id(cls, sandbox_id: str, *, url: str | None = None, token: str | None = None) -> None:
        """Kill a sandbox without connecting to it first, so a paused one is not resumed to be
        killed. Raises SandboxNotFound if it is already gone."""
        api = _Api(ConnectionConfig.resolve(url, token))
        try:
            api.request("DELETE", f"/sandboxes/{sandbox_id}")
        finally:
            api.http.close()

    @classmethod
    def list(
        cls, metadata: dict[str, str] | None = None, *, url: str | None = None, token: str | None = None
    ) -> list[SandboxInfo]:
        """The sandboxes, running and paused, whose metadata contains ``metadata``."""
        api = _Api(ConnectionConfig.resolve(url, token))
        try:
            body = api.request("GET", "/sandboxes", params=list_params(metadata)).json()
        finally:
            api.http.close()
        return [SandboxInfo.from_json(item) for item in body["sandboxes"]]

    @classmethod
    def restore(
        cls,
        snapshot_id: str,
        *,
        ttl_seconds: int | None = None,
        metadata: dict[str, str] | None = None,
        replay: bool = False,
        paused: bool = False,
        url: str | None = None,
        token: str | None = None,
        http_client: httpx.Client | None = None,
    ) -> Sandbox:
        """A new sandbox holding the snapshot's files, whose contexts (same ids) hold the variables
        they had. With ``replay``, a context some of whose variables could not be saved first
        re-runs its cells to rebuild them. With ``paused``, no kernel starts until the sandbox
        is first used (cheap to make, resumed on use). ``metadata`` defaults to the snapshot's.
        Raises SnapshotNotFound, SnapshotCorrupt or SnapshotFailed."""
        api = _Api(ConnectionConfig.resolve(url, token), http_client)
        with api.closed_on_error():
            response = api.request(
                "POST",
                f"/snapshots/{snapshot_id}/restore",
                json=restore_body(ttl_seconds, metadata, replay, paused),
                timeout=api.config.timeout(SNAPSHOT_TIMEOUT),
            )
        return cls._restored(response.json(), api)

    @classmethod
    def _restored(cls, body: dict[str, Any], api: _Api) -> Sandbox:
        return cls(SandboxInfo.from_json(body), api, RestoreReport.from_json(body.get("restore")))

    @classmethod
    def get_snapshot(
        cls, snapshot_id: str, *, url: str | None = None, token: str | None = None
    ) -> SnapshotInfo:
        api = _Api(ConnectionConfig.resolve(url, token))
        try:
            return SnapshotInfo.from_json(api.request("GET", f"/snapshots/{snapshot_id}").json())
        finally:
            api.http.close()

    @classmethod
    def delete_snapshot(cls, snapshot_id: str, *, url: str | None = None, token: str | None = None) -> None:
        """Raises SnapshotNotFound if there is no such snapshot."""
        api = _Api(ConnectionConfig.resolve(url, token))
        try:
            api.request("DELETE", f"/snapshots/{snapshot_id}")
        finally:
            api.http.close()

    @property
    def metadata(self) -> dict[str, str]:
        return self._info.metadata

    @property
    def template(self) -> str:
        return self._info.template

    @property
    def default_context(self) -> CodeContext:
        return CodeContext(self, self._info.default_context_id)

    def get_info(self) -> SandboxInfo:
        """How the sandbox is now (``state`` "running" or "paused"); looking does not resume it."""
        self._info = SandboxInfo.from_json(self._api.request("GET", f"/sandboxes/{self.sandbox_id}").json())
        return self._info

    @property
    def resumed(self) -> Resumed | None:
        """What the last resume brought back, as last heard (``connect``, ``resume``, ``get_info``)."""
        return self._info.resumed

    def resume(self) -> SandboxInfo:
        """Bring the sandbox back if it is paused (nothing to do if it runs); its info. Any other
        call resumes it too: this one says so before the next cell runs."""
        response = self._api.request(
            "POST",
            f"/sandboxes/{self.sandbox_id}/connect",
            timeout=self._api.config.timeout(SNAPSHOT_TIMEOUT),
        )
        self._info = SandboxInfo.from_json(response.json())
        return self._info

    def pause(self) -> SandboxInfo:
        """Stop its kernels, keeping their variables and the files on sandboxd's disk; any later
        call (or ``Sandbox.connect``) resumes it. What cannot be pickled is lost, and named in the
        resumed info. Raises ContextBusy while a cell runs."""
        response = self._api.request(
            "POST", f"/sandboxes/{self.sandbox_id}/pause", timeout=self._api.config.timeout(SNAPSHOT_TIMEOUT)
        )
        self._info = SandboxInfo.from_json(response.json())
        return self._info

    def create_code_context(self) -> CodeContext:
        """A new kernel in this sandbox, sharing its files but not its variables."""
        body = self._api.request("POST", f"/sandboxes/{self.sandbox_id}/contexts").json()
        return CodeContext(self, body["id"])

    def run_code(self, code: str, *, context: CodeContext | None = None, **options: Any) -> Execution:
        """Run ``code`` in ``context`` (default: the sandbox's first context); see CodeContext.run_code."""
        return (context or self.default_context).run_code(code, **options)

    def snapshot(self) -> SnapshotInfo:
        """Keep this sandbox's files and every context's variables (those that can be pickled;
        ``unsaved`` names the rest) in a snapshot that outlives the sandbox and sandboxd.
        Waits for no cell: raises ContextBusy while one runs, SnapshotTooLarge over the limit."""
        response = self._api.request(
            "POST",
            f"/sandboxes/{self.sandbox_id}/snapshots",
            timeout=self._api.config.timeout(SNAPSHOT_TIMEOUT),
        )
        return SnapshotInfo.from_json(response.json())

    def fork(self, *, ttl_seconds: int | None = None, metadata: dict[str, str] | None = None) -> Sandbox:
        """A new, independent sandbox in this one's state (files and variables)."""
        response = self._api.request(
            "POST",
            f"/sandboxes/{self.sandbox_id}/fork",
            json=restore_body(ttl_seconds, metadata, False),
            timeout=self._api.config.timeout(SNAPSHOT_TIMEOUT),
        )
        return self._restored(response.json(), _Api(self._api.config))

    def set_ttl(self, seconds: int) -> None:
        """Expire ``seconds`` after the last use from now on, instead of the TTL given at creation."""
        self._api.request("POST", f"/sandboxes/{self.sandbox_id}/ttl", json={"ttl_seconds": seconds})

    def kill(self) -> None:
        """Stop every kernel and delete the workdir. Raises SandboxNotFound if already gone."""
        self._api.request("DELETE", f"/sandboxes/{self.sandbox_id}")

    def close(self) -> None:
        """Close the HTTP connection; the sandbox lives on until killed or expired."""
        self._api.http.close()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.kill()
        finally:
            self.close()


class CodeContext:
    """One kernel: variables, imports and the working folder persist across run_code calls."""

    def __init__(self, sandbox: Sandbox, context_id: str) -> None:
        self.sandbox = sandbox
        self.id = context_id
        self._path = f"/sandboxes/{sandbox.sandbox_id}/contexts/{context_id}"

    def run_code(
        self,
        code: str,
        *,
        on_stdout: OutputHandler | None = None,
        on_stderr: OutputHandler | None = None,
        on_result: ResultHandler | None = None,
        on_error: ErrorHandler | None = None,
        timeout: float | None = None,
        request_timeout: float | None = None,
    ) -> Execution:
        """Run a cell, calling the handlers as output streams in; return the whole Execution.

        ``timeout`` bounds the cell on the server (interrupted, then the kernel restarted);
        ``request_timeout`` bounds the HTTP wait. A failing cell sets ``Execution.error``;
        service failures raise SandboxError (ContextBusy, SandboxNotFound, RequestTimeout ...).

        A handler that raises ends the cell: the stream is closed at once, so sandboxd interrupts
        the cell (its state up to there is kept) and the context takes the next run_code, and the
        handler's exception reaches the caller as it was raised, not wrapped.
        """
        api = self.sandbox._api
        handlers = Handlers(on_stdout, on_stderr, on_result, on_error)
        execution = Execution()
        lines = api.stream_lines(
            "POST",
            f"{self._path}/execute",
            json=execute_body(code, timeout),
            timeout=api.config.execution_timeout(timeout, request_timeout),
        )
        # Closed here, not when the generator is collected: a traceback holding this frame would
        # keep the stream, and so the cell, alive.
        with contextlib.closing(lines):
            for line in lines:
                apply_event(execution, parse_event(line), handlers)
        return execution

    def interrupt(self) -> bool:
        """Interrupt the running cell; True if the kernel stopped it."""
        return bool(self.sandbox._api.request("POST", f"{self._path}/interrupt").json()["interrupted"])

    def restart(self) -> None:
        """Restart the kernel with empty state (files are kept)."""
        self.sandbox._api.request("POST", f"{self._path}/restart")

    def variables(self) -> VariableList:
        """The user's variables (not modules, functions, classes, IPython's names or names that
        begin with an underscore), by name, each with its type, shape or length and size; read
        by sandboxd between cells without touching the transcript, the execution count or any
        variable. Raises ContextBusy while a cell runs, InspectionFailed when the kernel's
        report is late (past 10 s) or malformed."""
        return VariableList.from_json(self.sandbox._api.request("GET", f"{self._path}/variables").json())

    def preview(self, name: str, rows: int = 20) -> TablePreview:
        """The first ``rows`` (at most 100) rows and 50 columns of the DataFrame or Series ``name``.
        Raises VariableNotFound when there is no table of that name, InvalidRequest for a name
        that is not an identifier, and as variables() does."""
        path = f"{self._path}/variables/{name}"
        return TablePreview.from_json(self.sandbox._api.request("GET", path, params={"rows": rows}).json())

    def close(self) -> None:
        self.sandbox._api.request("DELETE", self._path)


class Files:
    """The sandbox's workdir (/home/user inside); paths are relative to it."""

    def __init__(self, sandbox: Sandbox) -> None:
        self._api = sandbox._api
        self._path = f"/sandboxes/{sandbox.sandbox_id}/files"

    def write(self, path: str, data: bytes | str | IO[bytes] | Iterable[bytes]) -> WriteInfo:
        """Store ``data`` at ``path``, streamed (a file object is read in chunks). Raises
        InvalidPath, FileTooLarge, QuotaExceeded."""
        content, headers = _upload_body(data)
        response = self._api.request(
            "PUT", self._path, params={"path": path}, content=content, headers=headers
        )
        return WriteInfo.from_json(response.json())

    def read(self, path: str, format: str = "text") -> str | bytes:
        """The file's contents as text (UTF-8) or, with format="bytes", bytes. Raises FileNotFound."""
        content = self._api.request("GET", self._path, params={"path": path}).content
        return content if format == "bytes" else content.decode()

    def read_chunks(self, path: str) -> Iterator[bytes]:
        """The file's bytes as they arrive, for a file too large to hold whole. Raises FileNotFound
        once iterated."""
        return self._api.stream_bytes("GET", self._path, params={"path": path})

    def remove(self, path: str) -> None:
        """Delete the file, or the folder with all it holds, at ``path``. Raises FileNotFound."""
        self._api.request("DELETE", self._path, params={"path": path})

    def list(self, path: str = ".", *, limit: int | None = None, cursor: str | None = None) -> Listing:
        """One page of the folder at ``path``: at most ``limit`` entries (sandboxd's page size,
        1,000 unless configured, when None), from ``cursor`` (an earlier page's ``next_cursor``)
        on. The Listing is a list of EntryInfo whose ``truncated`` says more follow. A name that
        is not UTF-8 comes escaped (``\\xff``). Raises FileNotFound, InvalidPath, InvalidRequest."""
        params = list_files_params(path, limit, cursor)
        return Listing.from_json(self._api.request("GET", f"{self._path}/list", params=params).json())


def _upload_body(
    data: bytes | str | IO[bytes] | Iterable[bytes],
) -> tuple[bytes | Iterator[bytes], dict[str, str]]:
    """The request body for ``data`` and its headers. A file is read in FILE_CHUNK pieces; a
    regular file's length is declared, so that sandboxd refuses one over its limit before any
    of it is sent, and the body goes without chunked framing (measured: a quarter to a third of
    the client's CPU time for 256 KiB chunks, chunked)."""
    if isinstance(data, str):
        return data.encode(), {}
    if isinstance(data, bytes):
        return data, {}
    if hasattr(data, "read"):
        length = remaining_length(data)  # type: ignore[arg-type]
        headers = {} if length is None else {"Content-Length": str(length)}
        return iter(lambda: data.read(FILE_CHUNK), b""), headers  # type: ignore[union-attr]
    return iter(data), {}


def remaining_length(stream: IO[bytes]) -> int | None:
    """Bytes left to read in ``stream`` when it is a regular file on disk, else None."""
    try:
        info = os.fstat(stream.fileno())
        position = stream.tell()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both of the last two
        return None
    return max(info.st_size - position, 0) if stat.S_ISREG(info.st_mode) else None
