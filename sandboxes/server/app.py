"""sandboxd's HTTP API: JSON in, JSON or NDJSON out, every error a JSON body with a stable code."""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from sandboxes.errors import AuthenticationError, InvalidRequest, SandboxError
from sandboxes.kernels.messages import error_event
from sandboxes.server import files
from sandboxes.server.registry import Registry

log = logging.getLogger(__name__)
NDJSON = "application/x-ndjson"


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


def build_app(registry: Registry) -> Starlette:
    config = registry.config

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok", "sandboxes": len(registry.sandboxes)})

    async def create_sandbox(request: Request) -> Response:
        body = await json_body(request)
        metadata = body.get("metadata") or {}
        if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
            raise InvalidRequest("metadata must be an object of strings")
        sandbox = await registry.create(
            template=str(body.get("template", "code-interpreter")),
            ttl_seconds=registry.check_ttl(body.get("ttl_seconds")),
            metadata=metadata,
        )
        return JSONResponse(sandbox.info(), status_code=201)

    async def list_sandboxes(request: Request) -> Response:
        metadata = {k[9:]: v for k, v in request.query_params.items() if k.startswith("metadata.")}
        return JSONResponse({"sandboxes": [s.info() for s in registry.list(metadata)]})

    async def get_sandbox(request: Request) -> Response:
        return JSONResponse(registry.get(request.path_params["sid"], touch=False).info())

    async def kill_sandbox(request: Request) -> Response:
        await registry.kill(request.path_params["sid"])
        return Response(status_code=204)

    async def set_ttl(request: Request) -> Response:
        sandbox = registry.get(request.path_params["sid"])
        sandbox.set_ttl(registry.check_ttl((await json_body(request)).get("ttl_seconds")))
        return JSONResponse(sandbox.info())

    async def create_context(request: Request) -> Response:
        context = await registry.get(request.path_params["sid"]).new_context()
        return JSONResponse(context.info(), status_code=201)

    async def close_context(request: Request) -> Response:
        await registry.get(request.path_params["sid"]).close_context(request.path_params["cid"])
        return Response(status_code=204)

    async def interrupt(request: Request) -> Response:
        context = registry.get(request.path_params["sid"]).context(request.path_params["cid"])
        return JSONResponse({"interrupted": await context.interrupt()})

    async def restart(request: Request) -> Response:
        context = registry.get(request.path_params["sid"]).context(request.path_params["cid"])
        await context.restart()
        return JSONResponse(context.info())

    async def execute(request: Request) -> Response:
        sandbox = registry.get(request.path_params["sid"])
        context = sandbox.context(request.path_params["cid"])
        body = await json_body(request)
        code = body.get("code")
        if not isinstance(code, str):
            raise InvalidRequest("code must be a string")
        timeout = body.get("timeout") or config.default_cell_timeout
        if not isinstance(timeout, (int, float)) or timeout <= 0:
            raise InvalidRequest("timeout must be a positive number of seconds")
        events = context.run(code, timeout=float(timeout), stdout_limit=config.stdout_limit_bytes)
        first = await anext(aiter(events))  # raises ContextBusy before any byte is sent

        async def stream() -> AsyncIterator[bytes]:
            try:
                yield _line(first)
                async for event in events:
                    yield _line(event)
            except Exception as exc:  # the stream has started: report in band
                log.exception("execution failed in sandbox %s", sandbox.id)
                yield _line(error_event("SandboxError", f"execution failed: {exc}", []))
                yield _line({"type": "end_of_execution", "execution_count": None})
            finally:
                await events.aclose()  # a client gone mid-cell: the context interrupts it
                sandbox.touch()

        return StreamingResponse(stream(), media_type=NDJSON)

    async def write_file(request: Request) -> Response:
        sandbox = registry.get(request.path_params["sid"])
        path = request.query_params.get("path", "")
        declared = request.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > config.max_upload_bytes:
            raise files.FileTooLarge(f"the file is larger than the limit of {config.max_upload_bytes} bytes")
        size = await files.write(sandbox.workdir, path, request.stream(), max_bytes=config.max_upload_bytes)
        return JSONResponse({"path": "/".join(files.split(path)), "size": size}, status_code=201)

    async def read_file(request: Request) -> Response:
        sandbox = registry.get(request.path_params["sid"])
        fd, size = files.open_for_read(sandbox.workdir, request.query_params.get("path", ""))
        headers = {"content-length": str(size)}
        return StreamingResponse(files.iter_file(fd), media_type="application/octet-stream", headers=headers)

    async def list_files(request: Request) -> Response:
        sandbox = registry.get(request.path_params["sid"])
        return JSONResponse({"entries": files.list_dir(sandbox.workdir, request.query_params.get("path", ""))})

    base = "/sandboxes/{sid}"
    context_base = base + "/contexts/{cid}"
    routes = [
        Route("/health", health),
        Route("/sandboxes", create_sandbox, methods=["POST"]),
        Route("/sandboxes", list_sandboxes, methods=["GET"]),
        Route(base, get_sandbox, methods=["GET"]),
        Route(base, kill_sandbox, methods=["DELETE"]),
        Route(base + "/ttl", set_ttl, methods=["POST"]),
        Route(base + "/contexts", create_context, methods=["POST"]),
        Route(context_base, close_context, methods=["DELETE"]),
        Route(context_base + "/interrupt", interrupt, methods=["POST"]),
        Route(context_base + "/restart", restart, methods=["POST"]),
        Route(context_base + "/execute", execute, methods=["POST"]),
        Route(base + "/files", write_file, methods=["PUT"]),
        Route(base + "/files", read_file, methods=["GET"]),
        Route(base + "/files/list", list_files, methods=["GET"]),
    ]

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        registry.start()
        yield
        await registry.close()

    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={SandboxError: _handle})
    return TokenAuth(app, config.token)


async def _handle(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, SandboxError)
    return error_response(exc)


def _line(event: dict[str, Any]) -> bytes:
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
