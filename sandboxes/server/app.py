"""sandboxd's HTTP API: JSON in, JSON or NDJSON out, every error a JSON body with a stable code."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import secrets
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import zmq
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from sandboxes.errors import AuthenticationError, FileTooLarge, InvalidRequest, NotFound, SandboxError
from sandboxes.kernels.messages import Event, error_event
from sandboxes.server import files
from sandboxes.server.contexts import CodeContext
from sandboxes.server.egress.endpoints import check_spec
from sandboxes.server.egress.policy import Policy
from sandboxes.server.egress.service import EgressService
from sandboxes.server.paused_records import PausedRecords
from sandboxes.server.pausing.pauser import Pauser
from sandboxes.server.registry import Registry
from sandboxes.server.sandbox import ServerSandbox
from sandboxes.server.snapshots.service import Snapshots
from sandboxes.server.snapshots.store import store_for
from sandboxes.server.system_limits import capacity_error, open_files_limit
from sandboxes.server.variables import rows as table_rows
from sandboxes.server.variables import service as variables

log = logging.getLogger(__name__)
NDJSON = "application/x-ndjson"
MAX_IDEMPOTENCY_KEY = 255


class SandboxApi:
    """The endpoints: each looks up what it needs in the registry, acts, and serialises."""

    def __init__(
        self, registry: Registry, snapshots: Snapshots, pauser: Pauser, egress: EgressService
    ) -> None:
        self.registry = registry
        self.snapshots = snapshots
        self.pauser = pauser
        self.egress = egress
        self.config = registry.config

    def routes(self) -> list[Route]:
        sandbox = "/sandboxes/{sid}"
        context = sandbox + "/contexts/{cid}"
        return [
            Route("/health", self.health),
            Route("/stats", self.stats, methods=["GET"]),
            Route("/sandboxes", self.create_sandbox, methods=["POST"]),
            Route("/sandboxes", self.list_sandboxes, methods=["GET"]),
            Route(sandbox, self.get_sandbox, methods=["GET"]),
            Route(sandbox, self.kill_sandbox, methods=["DELETE"]),
            Route(sandbox + "/ttl", self.set_ttl, methods=["POST"]),
            Route(sandbox + "/pause", self.pause_sandbox, methods=["POST"]),
            Route(sandbox + "/connect", self.connect_sandbox, methods=["POST"]),
            Route(sandbox + "/contexts", self.create_context, methods=["POST"]),
            Route(context, self.close_context, methods=["DELETE"]),
            Route(context + "/interrupt", self.interrupt, methods=["POST"]),
            Route(context + "/restart", self.restart, methods=["POST"]),
            Route(context + "/execute", self.execute, methods=["POST"]),
            Route(context + "/variables", self.variables, methods=["GET"]),
            Route(context + "/variables/{name}", self.preview_variable, methods=["GET"]),
            Route(context + "/variables/{name}/rows", self.variable_rows, methods=["GET"]),
            Route(context + "/variables/{name}/csv", self.variable_csv, methods=["GET"]),
            Route(sandbox + "/files", self.write_file, methods=["PUT"]),
            Route(sandbox + "/files", self.read_file, methods=["GET"]),
            Route(sandbox + "/files", self.remove_file, methods=["DELETE"]),
            Route(sandbox + "/files/list", self.list_files, methods=["GET"]),
            Route(sandbox + "/egress", self.set_egress, methods=["PUT"]),
            Route(sandbox + "/egress", self.get_egress, methods=["GET"]),
            Route(sandbox + "/egress/check", self.check_egress, methods=["POST"]),
            Route(sandbox + "/snapshots", self.take_snapshot, methods=["POST"]),
            Route(sandbox + "/fork", self.fork, methods=["POST"]),
            Route("/snapshots/{snap}", self.get_snapshot, methods=["GET"]),
            Route("/snapshots/{snap}", self.delete_snapshot, methods=["DELETE"]),
            Route("/snapshots/{snap}/restore", self.restore, methods=["POST"]),
        ]

    def _sandbox(self, request: Request) -> contextlib.AbstractAsyncContextManager[ServerSandbox]:
        """The request's sandbox, resumed if it was paused, and kept from pausing meanwhile."""
        return self.pauser.using(request.path_params["sid"])

    @contextlib.asynccontextmanager
    async def _context(self, request: Request) -> AsyncIterator[tuple[ServerSandbox, CodeContext]]:
        async with self._sandbox(request) as sandbox:
            yield sandbox, sandbox.context(request.path_params["cid"])

    async def health(self, request: Request) -> Response:
        return JSONResponse(
            {"status": "ok", "sandboxes": len(self.registry.sandboxes), "cgroups": self.registry.cgroups}
        )

    async def stats(self, request: Request) -> Response:
        """What the web app's /metrics reports: live sandboxes, and ready kernels per template;
        and the host's available memory, by which the app places new sessions among hosts."""
        from sandboxes.server.pool_sizing import memory_available

        pool = self.registry.pool
        ready = {name: len(units) for name, units in pool.ready.items()}
        target = {name: pool.target(name) for name in pool.ready}
        return JSONResponse(
            {
                "sandboxes": len(self.registry.sandboxes),
                "paused": len(self.registry.paused),
                "max_sandboxes": self.config.max_sandboxes,
                "open_files_limit": open_files_limit(),
                "pool": {"size": pool.size, "max": pool.max_size, "target": target, "ready": ready},
                "memory_available": memory_available(),
                "egress": self.egress.totals.info(),
            }
        )

    async def create_sandbox(self, request: Request) -> Response:
        body = await json_body(request)
        sandbox, created = await self.registry.create_once(
            idempotency_key(request),
            template=str(body.get("template", "code-interpreter")),
            ttl_seconds=self.registry.check_ttl(body.get("ttl_seconds")),
            metadata=check_metadata(body.get("metadata"), missing={}) or {},
        )
        return JSONResponse(sandbox.info(), status_code=201 if created else 200)

    async def list_sandboxes(self, request: Request) -> Response:
        metadata = {k[9:]: v for k, v in request.query_params.items() if k.startswith("metadata.")}
        return JSONResponse({"sandboxes": [s.info() for s in self.registry.list(metadata)]})

    async def get_sandbox(self, request: Request) -> Response:
        """Its info, live or paused (looking does not resume it, nor restart its TTL)."""
        return JSONResponse(self.pauser.describe(request.path_params["sid"]))

    async def kill_sandbox(self, request: Request) -> Response:
        await self.pauser.kill(request.path_params["sid"])
        return Response(status_code=204)

    async def set_ttl(self, request: Request) -> Response:
        seconds = self.registry.check_ttl((await json_body(request)).get("ttl_seconds"))
        return JSONResponse(self.pauser.set_ttl(request.path_params["sid"], seconds))

    async def pause_sandbox(self, request: Request) -> Response:
        """Stop its kernels and keep their state; ContextBusy while a cell runs."""
        record = await self.pauser.pause(request.path_params["sid"])
        return JSONResponse(record.info())

    async def connect_sandbox(self, request: Request) -> Response:
        """Its info, running: resumed first if it was paused (``resumed`` says what came back)."""
        async with self._sandbox(request) as sandbox:
            return JSONResponse(sandbox.info())

    async def create_context(self, request: Request) -> Response:
        async with self._sandbox(request) as sandbox:
            context = await sandbox.another_context()
        return JSONResponse(context.info(), status_code=201)

    async def close_context(self, request: Request) -> Response:
        async with self._sandbox(request) as sandbox:
            await sandbox.close_context(request.path_params["cid"])
        return Response(status_code=204)

    async def interrupt(self, request: Request) -> Response:
        async with self._context(request) as (_, context):
            return JSONResponse({"interrupted": await context.interrupt()})

    async def restart(self, request: Request) -> Response:
        async with self._context(request) as (_, context):
            await context.restart()
            return JSONResponse(context.info())

    async def execute(self, request: Request) -> Response:
        body = await json_body(request)
        code = body.get("code")
        if not isinstance(code, str):
            raise InvalidRequest("code must be a string")
        timeout = body.get("timeout") or self.config.default_cell_timeout
        if not isinstance(timeout, (int, float)) or timeout <= 0:
            raise InvalidRequest("timeout must be a positive number of seconds")
        async with self._context(request) as (sandbox, context):
            events = context.run(
                code,
                timeout=float(timeout),
                stdout_limit=self.config.stdout_limit_bytes,
                results_limit=self.config.results_limit_bytes,
            )
            # Raises ContextBusy before any byte is sent; from here the cell holds the context,
            # so the sandbox is busy (never paused) until the stream ends.
            first = await anext(aiter(events))
            notice = self.pauser.take_notice(sandbox.id)  # taken once the cell surely runs
            if notice:
                events = _after(first, events)
                first = {"type": "stderr", "text": notice}
        return StreamingResponse(_stream(sandbox, first, events), media_type=NDJSON)

    async def variables(self, request: Request) -> Response:
        """The context's user variables, read by a silent cell between cells (ContextBusy during one)."""
        async with self._context(request) as (_, context):
            await context.complete_state()
            return JSONResponse(await variables.list_variables(context))

    async def preview_variable(self, request: Request) -> Response:
        """A DataFrame's or Series' first ``rows`` rows as pandas' table schema JSON."""
        rows = request.query_params.get("rows", "20")
        if not rows.isdigit():
            raise InvalidRequest("rows must be a whole number")
        async with self._context(request) as (_, context):
            await context.complete_state()
            table = await variables.preview(context, request.path_params["name"], int(rows))
        return JSONResponse(table)

    async def variable_rows(self, request: Request) -> Response:
        """A page of a table's rows, filtered and sorted over the whole frame (variables/rows.py)."""
        query = rows_query(request)
        offset, limit = (
            whole_number(request, key, default) for key, default in (("offset", 0), ("limit", 50))
        )
        async with self._context(request) as (_, context):
            await context.complete_state()
            return JSONResponse(await table_rows.page(context, query, offset=offset, limit=limit))

    async def variable_csv(self, request: Request) -> Response:
        """The whole table, filtered and sorted, as CSV: written by the kernel, then streamed."""
        query = rows_query(request)
        max_bytes = whole_number(request, "max_bytes", 0)
        async with self._context(request) as (sandbox, context):
            await context.complete_state()
            fd, size = await table_rows.csv_file(context, sandbox.workdir, query, max_bytes=max_bytes)
        headers = {"content-length": str(size)}
        return StreamingResponse(files.iter_file(fd), media_type="text/csv; charset=utf-8", headers=headers)

    async def write_file(self, request: Request) -> Response:
        path = request.query_params.get("path", "")
        limit = self.config.max_upload_bytes
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise FileTooLarge(f"the file is larger than the limit of {limit} bytes")
        async with self._sandbox(request) as sandbox:
            size = await files.write(
                sandbox.workdir, path, request.stream(), max_bytes=limit, owner=sandbox.owner
            )
        return JSONResponse({"path": "/".join(files.split(path)), "size": size}, status_code=201)

    async def read_file(self, request: Request) -> Response:
        path = request.query_params.get("path", "")
        async with self._sandbox(request) as sandbox:
            # Once open, the file is read whole even if the sandbox is paused meanwhile.
            fd, size = await asyncio.to_thread(files.open_for_read, sandbox.workdir, path)
        headers = {"content-length": str(size)}
        return StreamingResponse(files.iter_file(fd), media_type="application/octet-stream", headers=headers)

    async def remove_file(self, request: Request) -> Response:
        async with self._sandbox(request) as sandbox:
            await asyncio.to_thread(files.remove_tree, sandbox.workdir, request.query_params.get("path", ""))
        return Response(status_code=204)

    async def list_files(self, request: Request) -> Response:
        query = request.query_params
        async with self._sandbox(request) as sandbox:
            page = await asyncio.to_thread(
                files.list_page,
                sandbox.workdir,
                query.get("path", ""),
                limit=files.check_page_limit(query.get("limit"), self.config.list_limit),
                cursor=query.get("cursor"),
            )
        return JSONResponse(page)

    async def set_egress(self, request: Request) -> Response:
        """Replace the sandbox's egress (sandboxes/server/egress); the same body again changes nothing."""
        spec = check_spec(await json_body(request), allow_list=bool(self.egress.policy.allow))
        async with self._sandbox(request) as sandbox:
            if sandbox.egress is None:
                sandbox.egress = self.egress.for_kernels(sandbox.spec)
            await sandbox.egress.apply(spec, sandbox.kernels())
        return JSONResponse(spec.answer())

    async def get_egress(self, request: Request) -> Response:
        async with self._sandbox(request) as sandbox:
            if sandbox.egress is None:
                return JSONResponse({"endpoints": [], "proxy": None, "ports": {}, "log": []})
            return JSONResponse(sandbox.egress.info())

    async def check_egress(self, request: Request) -> Response:
        """Whether sandboxd reaches one of the sandbox's endpoints (a TCP connection, within 5 s)."""
        name = (await json_body(request)).get("name")
        async with self._sandbox(request) as sandbox:
            spec = sandbox.egress.spec if sandbox.egress else None
            endpoint = spec.endpoint(name) if spec and isinstance(name, str) else None
        if endpoint is None:
            raise InvalidRequest(f"this sandbox has no egress endpoint named {name!r}")
        return JSONResponse(await self.egress.check(endpoint))

    async def take_snapshot(self, request: Request) -> Response:
        async with self._sandbox(request) as sandbox:
            info = await self.snapshots.take(sandbox)
        return JSONResponse(info, status_code=201)

    async def get_snapshot(self, request: Request) -> Response:
        return JSONResponse(await self.snapshots.info(request.path_params["snap"]))

    async def delete_snapshot(self, request: Request) -> Response:
        await anyio.to_thread.run_sync(self.snapshots.store.delete, request.path_params["snap"])
        return Response(status_code=204)

    async def restore(self, request: Request) -> Response:
        """A new sandbox in the snapshot's state; with ``paused``, one that starts on first use."""
        body = await json_body(request)
        ttl_seconds = self.registry.check_ttl(body.get("ttl_seconds"))
        metadata = check_metadata(body.get("metadata"), missing=None)
        if body.get("paused"):
            if body.get("replay"):
                raise InvalidRequest("a sandbox restored paused cannot replay its cells")
            record = await self.pauser.add_paused(
                request.path_params["snap"], ttl_seconds=ttl_seconds, metadata=metadata
            )
            return JSONResponse({**record.info(), "restore": None}, status_code=201)
        sandbox, report = await self.snapshots.restore(
            request.path_params["snap"],
            ttl_seconds=ttl_seconds,
            metadata=metadata,
            replay=bool(body.get("replay", False)),
        )
        return JSONResponse({**sandbox.info(), "restore": report}, status_code=201)

    async def fork(self, request: Request) -> Response:
        body = await json_body(request)
        async with self._sandbox(request) as source:
            sandbox, report = await self.snapshots.fork(
                source,
                ttl_seconds=self.registry.check_ttl(body.get("ttl_seconds")),
                metadata=check_metadata(body.get("metadata"), missing=None),
            )
        return JSONResponse({**sandbox.info(), "restore": report}, status_code=201)


def rows_query(request: Request) -> table_rows.Query:
    params = request.query_params
    return table_rows.Query(
        name=request.path_params["name"],
        token=params.get("token") or None,
        sort=params.get("sort") or None,
        desc=params.get("desc", "") in ("1", "true"),
        filter=params.get("filter", ""),
    )


def whole_number(request: Request, key: str, default: int) -> int:
    raw = request.query_params.get(key)
    if raw is None:
        return default
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 18:
        raise InvalidRequest(f"{key} must be a whole number")
    return int(raw)


def idempotency_key(request: Request) -> str | None:
    """The request's Idempotency-Key, scoped to its token (a caller never adopts another's)."""
    key = request.headers.get("idempotency-key", "")
    if not key:
        return None
    if len(key) > MAX_IDEMPOTENCY_KEY:
        raise InvalidRequest(f"Idempotency-Key may be at most {MAX_IDEMPOTENCY_KEY} characters")
    scope = hashlib.sha256(request.headers.get("authorization", "").encode()).hexdigest()[:16]
    return f"{scope}:{key}"


def check_metadata(metadata: object, *, missing: dict[str, str] | None) -> dict[str, str] | None:
    if metadata is None:
        return missing
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise InvalidRequest("metadata must be an object of strings")
    return metadata


async def _after(first: Event, events: AsyncIterator[Event]) -> AsyncIterator[Event]:
    """``first``, then ``events`` (closing it when closed: the cell is interrupted then)."""
    try:
        yield first
        async for event in events:
            yield event
    finally:
        await events.aclose()  # type: ignore[attr-defined]


async def _stream(sandbox: ServerSandbox, first: Event, events: AsyncIterator[Event]) -> AsyncIterator[bytes]:
    try:
        yield _line(first)
        async for event in events:
            yield _line(event)
    except Exception as exc:  # the stream has started: report in band
        log.exception("execution failed in sandbox %s", sandbox.id)
        yield _line(error_event("SandboxError", f"execution failed: {exc}", []))
        yield _line({"type": "end_of_execution", "execution_count": None})
    finally:
        # A client gone mid-cell cancels this task; shielded, the context still interrupts the cell.
        with anyio.CancelScope(shield=True):
            await events.aclose()  # type: ignore[attr-defined]
        sandbox.touch()


def build_app(registry: Registry, on_shutdown: Sequence[Callable[[], None]] = ()) -> TokenAuth:
    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        registry.start()
        pauser.start()
        yield
        await pauser.close()
        await registry.close()
        for cleanup in on_shutdown:
            cleanup()

    config = registry.config
    snapshots = Snapshots(
        registry,
        store_for(config),
        max_bytes=config.snapshot_max_bytes,
        scratch=config.data_dir / "scratch",
        restore_limit=config.restore_limit_seconds,
    )
    pauser = Pauser(
        registry,
        snapshots,
        PausedRecords(config.data_dir / "paused"),
        idle_pause_seconds=config.idle_pause_seconds,
        hold_limit_seconds=config.pause_hold_limit_seconds,
        memory_reserve=config.memory_reserve_bytes,
        idle_cpu_seconds=config.idle_cpu_seconds,
        idle_cpu_window=config.idle_cpu_window_seconds,
    )
    egress = EgressService(
        Policy.from_settings(
            config.egress_allow, loopback=config.egress_loopback, own=(config.host, config.port)
        )
    )
    api = SandboxApi(registry, snapshots, pauser, egress)
    handlers = {
        SandboxError: _handle,
        OSError: _system_error,
        zmq.ZMQError: _system_error,
        404: _no_route,
        405: _no_route,
    }
    app = Starlette(routes=api.routes(), lifespan=lifespan, exception_handlers=handlers)
    return TokenAuth(app, registry.config.token)


def error_response(exc: SandboxError) -> JSONResponse:
    body = {"error": {"code": exc.code, "message": exc.message}}
    return JSONResponse(body, status_code=exc.http_status)


async def json_body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw:
        return {}
    try:
        body = json.loads(raw)
    except ValueError:
        raise InvalidRequest("the request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise InvalidRequest("the request body must be a JSON object")
    return body


async def _handle(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, SandboxError)
    return error_response(exc)


async def _system_error(request: Request, exc: Exception) -> Response:
    """A system call that failed under a request: a limit reached is CapacityExceeded, saying
    which; anything else an internal_error, in JSON like every error (the connection stays up)."""
    error = capacity_error(exc)
    if error is None:
        log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
        error = SandboxError(f"internal error: {type(exc).__name__}: {exc}")
    else:
        log.warning("%s %s: %s (%s)", request.method, request.url.path, error.message, exc)
    return error_response(error)


async def _no_route(request: Request, exc: Exception) -> Response:
    status = getattr(exc, "status_code", 404)
    error = NotFound(f"no such endpoint: {request.method} {request.url.path}")
    return JSONResponse({"error": {"code": error.code, "message": error.message}}, status_code=status)


def _line(event: Event) -> bytes:
    return json.dumps(event, separators=(",", ":")).encode() + b"\n"


class TokenAuth:
    """ASGI middleware: every path but /health needs ``Authorization: Bearer <token>``."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] != "/health":
            given = dict(scope["headers"]).get(b"authorization", b"")
            if not secrets.compare_digest(given, self.expected):
                response = error_response(AuthenticationError("missing or wrong sandbox service token"))
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
