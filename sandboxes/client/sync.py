"""The blocking SDK: Sandbox, CodeContext and Files over one httpx.Client."""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterable, Iterator
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
from sandboxes.execution import (
    ErrorHandler,
    Execution,
    Handlers,
    OutputHandler,
    ResultHandler,
    apply_event,
    parse_event,
)

T = TypeVar("T")


class _Api:
    """One sandboxd connection: calls, streamed answers, translated errors."""

    def __init__(self, config: ConnectionConfig, http: httpx.Client | None = None) -> None:
        self.config = config
        if http is None:
            http = httpx.Client(**config.client_options())
            # A Sandbox dropped without close() (often: after kill()) closes the connection it made
            # when collected, or at exit, instead of leaving its socket to the garbage collector.
            weakref.finalize(self, http.close)
        self.http = http

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        with translate_errors():
            response = self.http.request(method, path, **kwargs)
        raise_for_status(response)
        return response

    def send(self, request: Request) -> httpx.Response:
        return self.request(request.method, request.path, **request.options())

    def call(self, call: Call[T]) -> T:
        return call.read(self.send(call.request))

    def call_first(self, call: Call[T]) -> T:
        """The first call of a new Sandbox's connection, which is closed if the request fails."""
        try:
            response = self.send(call.request)
        except BaseException:
            self.http.close()
            raise
        return call.read(response)

    def call_once(self, call: Call[T]) -> T:
        """The one call of a connection made for it, closed after."""
        try:
            return self.call(call)
        finally:
            self.http.close()

    @contextlib.contextmanager
    def _stream(self, request: Request) -> Iterator[httpx.Response]:
        with (
            translate_errors(),
            self.http.stream(request.method, request.path, **request.options()) as response,
        ):
            if response.status_code >= 400:
                response.read()
                raise_for_status(response)
            yield response

    def stream_lines(self, request: Request) -> Iterator[str]:
        with self._stream(request) as response:
            yield from (line for line in response.iter_lines() if line)

    def stream_bytes(self, request: Request) -> Iterator[bytes]:
        with self._stream(request) as response:
            yield from response.iter_bytes()


class Sandbox(BaseSandbox):
    """A sandbox on sandboxd: files, and code contexts whose state persists across cells.

    ``Sandbox.create()`` and ``Sandbox.connect(id)`` find the service through the
    SANDBOXD_URL and SANDBOXD_TOKEN environment variables unless given ``url``/``token``.
    """

    def __init__(self, info: SandboxInfo, api: _Api, restore_report: RestoreReport | None = None) -> None:
        self._api = api
        super().__init__(info, restore_report)
        self.files = Files(self)

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
        return cls(api.call_first(routes.create(template, ttl_seconds, metadata, idempotency_key)), api)

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
        return cls(api.call_first(routes.connect(sandbox_id)), api)

    @classmethod
    def pause_by_id(cls, sandbox_id: str, *, url: str | None = None, token: str | None = None) -> SandboxInfo:
        """Pause a sandbox without connecting to it first (as ``pause``); its info."""
        return _Api(ConnectionConfig.resolve(url, token)).call_once(routes.pause(sandbox_id))

    @classmethod
    def kill_by_id(cls, sandbox_id: str, *, url: str | None = None, token: str | None = None) -> None:
        """Kill a sandbox without connecting to it first, so a paused one is not resumed to be
        killed. Raises SandboxNotFound if it is already gone."""
        _Api(ConnectionConfig.resolve(url, token)).call_once(routes.kill(sandbox_id))

    @classmethod
    def list(
        cls, metadata: dict[str, str] | None = None, *, url: str | None = None, token: str | None = None
    ) -> list[SandboxInfo]:
        """The sandboxes, running and paused, whose metadata contains ``metadata``."""
        return _Api(ConnectionConfig.resolve(url, token)).call_once(routes.list_sandboxes(metadata))

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
        info, report = api.call_first(routes.restore(snapshot_id, ttl_seconds, metadata, replay, paused))
        return cls(info, api, report)

    @classmethod
    def get_snapshot(
        cls, snapshot_id: str, *, url: str | None = None, token: str | None = None
    ) -> SnapshotInfo:
        """The snapshot's record: what it holds and what it could not keep. Raises SnapshotNotFound."""
        return _Api(ConnectionConfig.resolve(url, token)).call_once(routes.get_snapshot(snapshot_id))

    @classmethod
    def delete_snapshot(cls, snapshot_id: str, *, url: str | None = None, token: str | None = None) -> None:
        """Raises SnapshotNotFound if there is no such snapshot."""
        _Api(ConnectionConfig.resolve(url, token)).call_once(routes.delete_snapshot(snapshot_id))

    @property
    def default_context(self) -> CodeContext:
        """The context the sandbox started with, which run_code uses unless given another."""
        return CodeContext(self, self._info.default_context_id)

    def get_info(self) -> SandboxInfo:
        """How the sandbox is now (``state`` "running" or "paused"); looking does not resume it."""
        return self._heard(self._api.call(routes.get_info(self.sandbox_id)))

    def resume(self) -> SandboxInfo:
        """Bring the sandbox back if it is paused (nothing to do if it runs); its info. Any other
        call resumes it too: this one says so before the next cell runs."""
        return self._heard(self._api.call(routes.connect(self.sandbox_id)))

    def pause(self) -> SandboxInfo:
        """Stop its kernels, keeping their variables and the files on sandboxd's disk; any later
        call (or ``Sandbox.connect``) resumes it. What cannot be pickled is lost, and named in the
        resumed info. Raises ContextBusy while a cell runs."""
        return self._heard(self._api.call(routes.pause(self.sandbox_id)))

    def create_code_context(self) -> CodeContext:
        """A new kernel in this sandbox, sharing its files but not its variables."""
        return CodeContext(self, self._api.call(routes.create_context(self.sandbox_id)))

    def run_code(self, code: str, *, context: CodeContext | None = None, **options: Any) -> Execution:
        """Run ``code`` in ``context`` (default: the sandbox's first context); see CodeContext.run_code."""
        return (context or self.default_context).run_code(code, **options)

    def snapshot(self) -> SnapshotInfo:
        """Keep this sandbox's files and every context's variables (those that can be pickled;
        ``unsaved`` names the rest) in a snapshot that outlives the sandbox and sandboxd.
        Waits for no cell: raises ContextBusy while one runs, SnapshotTooLarge over the limit."""
        return self._api.call(routes.snapshot(self.sandbox_id))

    def fork(self, *, ttl_seconds: int | None = None, metadata: dict[str, str] | None = None) -> Sandbox:
        """A new, independent sandbox in this one's state (files and variables)."""
        info, report = self._api.call(routes.fork(self.sandbox_id, ttl_seconds, metadata))
        return type(self)(info, _Api(self._api.config), report)

    def set_ttl(self, seconds: int) -> None:
        """Expire ``seconds`` after the last use from now on, instead of the TTL given at creation."""
        self._api.call(routes.set_ttl(self.sandbox_id, seconds))

    def set_egress(
        self, endpoints: list[dict[str, Any]], config: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Replace where this sandbox's kernels may connect: ``endpoints`` are
        ``{"name", "host", "port", "mode": "tcp" | "http"}``; ``config`` is written, beside the
        answer, to /run/kernel/egress.json in each kernel. Returns ``{"proxy": url or None,
        "ports": {name: port inside}}``. The same call twice changes nothing. Raises
        InvalidRequest for a malformed endpoint, SandboxError (code "egress_unavailable") when
        this sandbox's driver cannot have egress."""
        return self._api.call(routes.set_egress(self.sandbox_id, endpoints, config or {}))

    def egress(self) -> dict[str, Any]:
        """The egress as set (``endpoints``, ``proxy``, ``ports``) and ``log``: the last 200
        connections (host, port, name, bytes_in, bytes_out, started_at, ended_at, refused)."""
        return self._api.call(routes.egress(self.sandbox_id))

    def check_egress(self, name: str) -> dict[str, Any]:
        """Whether sandboxd reaches endpoint ``name`` (a TCP connection within 5 s): ``{"ok":
        True, "address"}`` or ``{"ok": False, "category", "message"}``, category one of dns,
        refused, timeout, blocked, unreachable. Raises InvalidRequest for an unknown name."""
        return self._api.call(routes.check_egress(self.sandbox_id, name))

    def kill(self) -> None:
        """Stop every kernel and delete the workdir. Raises SandboxNotFound if already gone."""
        self._api.call(routes.kill(self.sandbox_id))

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
        handlers = Handlers(on_stdout, on_stderr, on_result, on_error)
        execution = Execution()
        request = routes.execute(self.sandbox.sandbox_id, self.id, code, timeout, request_timeout)
        lines = self.sandbox._api.stream_lines(request)
        # Closed here, not when the generator is collected: a traceback holding this frame would
        # keep the stream, and so the cell, alive.
        with contextlib.closing(lines):
            for line in lines:
                apply_event(execution, parse_event(line), handlers)
        return execution

    def interrupt(self) -> bool:
        """Interrupt the running cell; True once it ended. A cell still running after the
        driver's interrupt grace (it ignores SIGINT, or sits in C code) is ended by restarting
        the kernel: that cell ends with a ``KernelRestarted`` error, and the state is gone."""
        return self.sandbox._api.call(routes.interrupt(self.sandbox.sandbox_id, self.id))

    def restart(self) -> None:
        """Restart the kernel with empty state (files are kept); a running cell ends with a
        ``KernelRestarted`` error."""
        self.sandbox._api.call(routes.restart(self.sandbox.sandbox_id, self.id))

    def variables(self) -> VariableList:
        """The user's variables (not modules, functions, classes, IPython's names or names that
        begin with an underscore), by name, each with its type, shape or length and size; read
        by sandboxd between cells without touching the transcript, the execution count or any
        variable. Raises ContextBusy while a cell runs, InspectionFailed when the kernel's
        report is late (past 10 s) or malformed."""
        return self.sandbox._api.call(routes.variables(self.sandbox.sandbox_id, self.id))

    def preview(self, name: str, rows: int = 20) -> TablePreview:
        """The first ``rows`` (at most 100) rows and 50 columns of the DataFrame or Series ``name``.
        Raises VariableNotFound when there is no table of that name, InvalidRequest for a name
        that is not an identifier, and as variables() does."""
        return self.sandbox._api.call(routes.preview(self.sandbox.sandbox_id, self.id, name, rows))

    def rows(
        self,
        name: str,
        *,
        offset: int = 0,
        limit: int = 50,
        sort: str | None = None,
        desc: bool = False,
        filter: str = "",
        token: str | None = None,
    ) -> TableRows:
        """A page of the DataFrame or Series ``name``, computed in the kernel over the whole
        frame: the rows whose shown text holds ``filter`` (any case), ordered by the column
        ``sort`` (missing values last), ``limit`` (at most 500) from ``offset``. ``token`` (a
        shown result's ``variable.token``) asks for the very table that result showed. Raises
        VariableNotFound (no such table, or no longer that one), InvalidRequest, ContextBusy,
        InspectionFailed (late past 8 s, or the data broke pandas)."""
        query = routes.table_query(token, sort, desc, filter) | {"offset": offset, "limit": limit}
        return self.sandbox._api.call(routes.table_rows(self.sandbox.sandbox_id, self.id, name, query))

    def csv_chunks(
        self,
        name: str,
        *,
        max_bytes: int,
        sort: str | None = None,
        desc: bool = False,
        filter: str = "",
        token: str | None = None,
    ) -> Iterator[bytes]:
        """The whole table as rows() chooses them, as CSV (its index first), once the kernel has
        written it, as it arrives. Raises, once iterated, as rows() does, and FileTooLarge for
        a CSV past ``max_bytes`` (InspectionFailed past 120 s)."""
        query = routes.table_query(token, sort, desc, filter) | {"max_bytes": max_bytes}
        return self.sandbox._api.stream_bytes(routes.table_csv(self.sandbox.sandbox_id, self.id, name, query))

    def close(self) -> None:
        """Stop this context's kernel; the sandbox and its other contexts go on. Raises
        ContextNotFound if it is already gone."""
        self.sandbox._api.call(routes.close_context(self.sandbox.sandbox_id, self.id))


class Files:
    """The sandbox's workdir (/home/user inside); paths are relative to it."""

    def __init__(self, sandbox: Sandbox) -> None:
        self._api = sandbox._api
        self._sandbox_id = sandbox.sandbox_id

    def write(self, path: str, data: bytes | str | IO[bytes] | Iterable[bytes]) -> WriteInfo:
        """Store ``data`` at ``path``, streamed (a file object is read in chunks). Raises
        InvalidPath, FileTooLarge, QuotaExceeded."""
        content, headers = upload_body(data, _file_chunks, iter)
        return self._api.call(routes.write_file(self._sandbox_id, path, content, headers))

    def read(self, path: str, format: str = "text") -> str | bytes:
        """The file's contents as text (UTF-8) or, with format="bytes", bytes. Raises FileNotFound."""
        return self._api.call(routes.read_file(self._sandbox_id, path, format))

    def read_chunks(self, path: str) -> Iterator[bytes]:
        """The file's bytes as they arrive, for a file too large to hold whole. Raises FileNotFound
        once iterated."""
        return self._api.stream_bytes(routes.read_chunks(self._sandbox_id, path))

    def remove(self, path: str) -> None:
        """Delete the file, or the folder with all it holds, at ``path``. Raises FileNotFound."""
        self._api.call(routes.remove_file(self._sandbox_id, path))

    def list(self, path: str = ".", *, limit: int | None = None, cursor: str | None = None) -> Listing:
        """One page of the folder at ``path``: at most ``limit`` entries (sandboxd's page size,
        1,000 unless configured, when None), from ``cursor`` (an earlier page's ``next_cursor``)
        on. The Listing is a list of EntryInfo whose ``truncated`` says more follow. A name that
        is not UTF-8 comes escaped (``\\xff``). Raises FileNotFound, InvalidPath, InvalidRequest."""
        return self._api.call(routes.list_files(self._sandbox_id, path, limit, cursor))


def _file_chunks(stream: IO[bytes]) -> Iterator[bytes]:
    return iter(lambda: stream.read(FILE_CHUNK), b"")
