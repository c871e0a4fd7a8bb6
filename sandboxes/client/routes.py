"""sandboxd's HTTP API for both SDKs: each call's method, path, query, body and timeout, and its reader."""

from __future__ import annotations

from collections.abc import AsyncIterable, Callable, Iterable
from typing import Any, TypeVar

import httpx

from sandboxes.client import payloads
from sandboxes.client.call import Call, Request
from sandboxes.client.connection import SNAPSHOT_TIMEOUT, execution_timeout, wait_for

T = TypeVar("T")
Restored = tuple[payloads.SandboxInfo, payloads.RestoreReport | None]

SNAPSHOT_WAIT = wait_for(SNAPSHOT_TIMEOUT)
CSV_TIMEOUT = 150.0  # sandboxd gives the kernel 120 s to write a table's CSV


def _json(read: Callable[[dict[str, Any]], T]) -> Callable[[httpx.Response], T]:
    return lambda response: read(response.json())


def _nothing(response: httpx.Response) -> None:
    return None


def _restored(body: dict[str, Any]) -> Restored:
    return payloads.SandboxInfo.from_json(body), payloads.RestoreReport.from_json(body.get("restore"))


def _sandbox(sandbox_id: str) -> str:
    return f"/sandboxes/{sandbox_id}"


def _context(sandbox_id: str, context_id: str) -> str:
    return f"/sandboxes/{sandbox_id}/contexts/{context_id}"


def _files(sandbox_id: str) -> str:
    return f"/sandboxes/{sandbox_id}/files"


def _restore_body(
    ttl_seconds: int | None, metadata: dict[str, str] | None, replay: bool, paused: bool = False
) -> dict[str, Any]:
    return {"ttl_seconds": ttl_seconds, "metadata": metadata, "replay": replay, "paused": paused}


def create(
    template: str, ttl_seconds: int | None, metadata: dict[str, str] | None, idempotency_key: str | None
) -> Call[payloads.SandboxInfo]:
    body = {"template": template, "ttl_seconds": ttl_seconds, "metadata": metadata or {}}
    headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
    request = Request("POST", "/sandboxes", json=body, headers=headers)
    return Call(request, _json(payloads.SandboxInfo.from_json))


def list_sandboxes(metadata: dict[str, str] | None) -> Call[list[payloads.SandboxInfo]]:
    params = {f"metadata.{key}": value for key, value in (metadata or {}).items()}
    request = Request("GET", "/sandboxes", params=params)
    return Call(
        request, _json(lambda body: [payloads.SandboxInfo.from_json(item) for item in body["sandboxes"]])
    )


def get_info(sandbox_id: str) -> Call[payloads.SandboxInfo]:
    return Call(Request("GET", _sandbox(sandbox_id)), _json(payloads.SandboxInfo.from_json))


def connect(sandbox_id: str) -> Call[payloads.SandboxInfo]:
    """Its info, running: resumed first if it was paused."""
    request = Request("POST", f"{_sandbox(sandbox_id)}/connect", timeout=SNAPSHOT_WAIT)
    return Call(request, _json(payloads.SandboxInfo.from_json))


def pause(sandbox_id: str) -> Call[payloads.SandboxInfo]:
    request = Request("POST", f"{_sandbox(sandbox_id)}/pause", timeout=SNAPSHOT_WAIT)
    return Call(request, _json(payloads.SandboxInfo.from_json))


def set_ttl(sandbox_id: str, seconds: int) -> Call[None]:
    return Call(Request("POST", f"{_sandbox(sandbox_id)}/ttl", json={"ttl_seconds": seconds}), _nothing)


def kill(sandbox_id: str) -> Call[None]:
    return Call(Request("DELETE", _sandbox(sandbox_id)), _nothing)


def set_egress(
    sandbox_id: str, endpoints: list[dict[str, Any]], config: dict[str, Any]
) -> Call[dict[str, Any]]:
    body = {"endpoints": endpoints, "config": config}
    return Call(Request("PUT", f"{_sandbox(sandbox_id)}/egress", json=body), _json(dict))


def egress(sandbox_id: str) -> Call[dict[str, Any]]:
    return Call(Request("GET", f"{_sandbox(sandbox_id)}/egress"), _json(dict))


def check_egress(sandbox_id: str, name: str) -> Call[dict[str, Any]]:
    request = Request("POST", f"{_sandbox(sandbox_id)}/egress/check", json={"name": name})
    return Call(request, _json(dict))


def create_context(sandbox_id: str) -> Call[str]:
    """The new context's id."""
    return Call(Request("POST", f"{_sandbox(sandbox_id)}/contexts"), _json(lambda body: body["id"]))


def snapshot(sandbox_id: str) -> Call[payloads.SnapshotInfo]:
    request = Request("POST", f"{_sandbox(sandbox_id)}/snapshots", timeout=SNAPSHOT_WAIT)
    return Call(request, _json(payloads.SnapshotInfo.from_json))


def fork(sandbox_id: str, ttl_seconds: int | None, metadata: dict[str, str] | None) -> Call[Restored]:
    body = _restore_body(ttl_seconds, metadata, False)
    request = Request("POST", f"{_sandbox(sandbox_id)}/fork", json=body, timeout=SNAPSHOT_WAIT)
    return Call(request, _json(_restored))


def restore(
    snapshot_id: str, ttl_seconds: int | None, metadata: dict[str, str] | None, replay: bool, paused: bool
) -> Call[Restored]:
    body = _restore_body(ttl_seconds, metadata, replay, paused)
    request = Request("POST", f"/snapshots/{snapshot_id}/restore", json=body, timeout=SNAPSHOT_WAIT)
    return Call(request, _json(_restored))


def get_snapshot(snapshot_id: str) -> Call[payloads.SnapshotInfo]:
    return Call(Request("GET", f"/snapshots/{snapshot_id}"), _json(payloads.SnapshotInfo.from_json))


def delete_snapshot(snapshot_id: str) -> Call[None]:
    return Call(Request("DELETE", f"/snapshots/{snapshot_id}"), _nothing)


def execute(
    sandbox_id: str, context_id: str, code: str, timeout: float | None, request_timeout: float | None
) -> Request:
    """A streamed request: its answer is one NDJSON event a line (sandboxes.execution)."""
    return Request(
        "POST",
        f"{_context(sandbox_id, context_id)}/execute",
        json={"code": code, "timeout": timeout},
        timeout=execution_timeout(timeout, request_timeout),
    )


def interrupt(sandbox_id: str, context_id: str) -> Call[bool]:
    request = Request("POST", f"{_context(sandbox_id, context_id)}/interrupt")
    return Call(request, _json(lambda body: bool(body["interrupted"])))


def restart(sandbox_id: str, context_id: str) -> Call[None]:
    return Call(Request("POST", f"{_context(sandbox_id, context_id)}/restart"), _nothing)


def variables(sandbox_id: str, context_id: str) -> Call[payloads.VariableList]:
    request = Request("GET", f"{_context(sandbox_id, context_id)}/variables")
    return Call(request, _json(payloads.VariableList.from_json))


def preview(sandbox_id: str, context_id: str, name: str, rows: int) -> Call[payloads.TablePreview]:
    request = Request("GET", f"{_context(sandbox_id, context_id)}/variables/{name}", params={"rows": rows})
    return Call(request, _json(payloads.TablePreview.from_json))


def table_rows(
    sandbox_id: str, context_id: str, name: str, query: dict[str, Any]
) -> Call[payloads.TableRows]:
    path = f"{_context(sandbox_id, context_id)}/variables/{name}/rows"
    return Call(Request("GET", path, params=query), _json(payloads.TableRows.from_json))


def table_csv(sandbox_id: str, context_id: str, name: str, query: dict[str, Any]) -> Request:
    """A streamed request: its answer is the CSV's bytes, once the kernel has written them all."""
    path = f"{_context(sandbox_id, context_id)}/variables/{name}/csv"
    return Request("GET", path, params=query, timeout=wait_for(CSV_TIMEOUT))


def table_query(token: str | None, sort: str | None, desc: bool, filter: str) -> dict[str, Any]:
    query = {"token": token, "sort": sort, "desc": "1" if desc else None, "filter": filter or None}
    return {key: value for key, value in query.items() if value is not None}


def close_context(sandbox_id: str, context_id: str) -> Call[None]:
    return Call(Request("DELETE", _context(sandbox_id, context_id)), _nothing)


def write_file(
    sandbox_id: str,
    path: str,
    content: bytes | Iterable[bytes] | AsyncIterable[bytes],
    headers: dict[str, str],
) -> Call[payloads.WriteInfo]:
    request = Request("PUT", _files(sandbox_id), params={"path": path}, content=content, headers=headers)
    return Call(request, _json(payloads.WriteInfo.from_json))


def read_file(sandbox_id: str, path: str, format: str) -> Call[str | bytes]:
    def read(response: httpx.Response) -> str | bytes:
        return response.content if format == "bytes" else response.content.decode()

    return Call(Request("GET", _files(sandbox_id), params={"path": path}), read)


def read_chunks(sandbox_id: str, path: str) -> Request:
    """A streamed request: its answer is the file's bytes."""
    return Request("GET", _files(sandbox_id), params={"path": path})


def remove_file(sandbox_id: str, path: str) -> Call[None]:
    return Call(Request("DELETE", _files(sandbox_id), params={"path": path}), _nothing)


def list_files(sandbox_id: str, path: str, limit: int | None, cursor: str | None) -> Call[payloads.Listing]:
    params = {"path": path}
    if limit is not None:
        params["limit"] = str(limit)
    if cursor is not None:
        params["cursor"] = cursor
    request = Request("GET", f"{_files(sandbox_id)}/list", params=params)
    return Call(request, _json(payloads.Listing.from_json))
