"""Test a connection from a sandbox: sandboxd first tries its endpoint (DNS, refused, timeout,
blocked: said in words), then the kernel's own check connects as the kernel will (auth, TLS) and
reads the tables and columns. What it found is stored on the connection: .checked, and .schema
when it got in. What the kernel answers is checked as all sandbox output is."""

from __future__ import annotations

import json
import logging
from typing import Any

from django.utils import timezone

from analyst.audit import records as audit_records
from analyst.connections import egress, kinds
from analyst.connections.registry import secret_of
from analyst.models import Connection
from sandboxes import Sandbox, SandboxError

log = logging.getLogger(__name__)

CHECK_TIMEOUT = 60  # the kernel's check: connect, then read the catalog
THROWAWAY_TTL = 300
MAX_TABLES = 200
MAX_COLUMNS = 100
MAX_TEXT = 200
MAX_KEY = 1024  # an S3 object key's own limit
MAX_MESSAGE = 500
CATEGORIES = {
    "dns",
    "refused",
    "timeout",
    "blocked",
    "unreachable",
    "auth",
    "tls",
    "not_found",
    "unavailable",
    "other",
}
CELL = "import _analyst_connections, json\nprint(json.dumps(_analyst_connections.check({name!r})))\n"


def test(connection: Connection, *, url: str | None = None) -> dict[str, Any]:
    """Test ``connection`` from a throwaway sandbox (on the sandboxd at ``url``) given it alone,
    killed after; the outcome {"ok", "category", "message", "schema"}, stored."""
    outcome = in_throwaway(connection, url=url)
    record(connection, outcome)
    said = {"ok": bool(outcome.get("ok")), "category": outcome.get("category") or ""}
    audit_records.record_for_connection("connection_test", connection, detail=said)
    return outcome


def in_throwaway(connection: Connection, *, url: str | None) -> dict[str, Any]:
    try:
        sandbox = Sandbox.create(
            ttl_seconds=THROWAWAY_TTL, metadata={"connection_check": str(connection.owner_id)}, url=url
        )
    except SandboxError as exc:
        return failed("unavailable", f"No sandbox could be started to test the connection ({exc.message}).")
    try:
        egress.open_to(sandbox, [connection], env={})
        return probe(sandbox, connection)
    except SandboxError as exc:
        return failed("unavailable", f"The sandbox could not be let out to the connection ({exc.message}).")
    finally:
        try:
            sandbox.kill()
        except SandboxError as exc:
            log.info("could not kill the sandbox %s that tested a connection: %s", sandbox.sandbox_id, exc)
        sandbox.close()


def probe(sandbox: Sandbox, connection: Connection) -> dict[str, Any]:
    """Test ``connection`` from ``sandbox``, whose egress includes it already. Raises SandboxError."""
    if kinds.endpoint(connection.kind, connection.url, connection.options) is not None:
        reached = sandbox.check_egress(connection.name)
        if not reached.get("ok"):
            return failed(_category(reached.get("category")), _said(reached.get("message"), connection))
    context = sandbox.create_code_context()
    try:
        execution = context.run_code(CELL.format(name=connection.name), timeout=CHECK_TIMEOUT)
    finally:
        try:
            context.close()
        except SandboxError:
            pass  # gone with its kernel already
    lines = [line for line in execution.stdout.splitlines() if line.strip()]
    if execution.error is not None and not lines:
        error = f"{execution.error.name}: {execution.error.value}"
        return failed("other", _said(f"The kernel's check failed: {error}", connection))
    return _read(lines[-1] if lines else "", connection)


def _read(line: str, connection: Connection) -> dict[str, Any]:
    try:
        answer = json.loads(line)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        return failed("other", "The kernel's check answered something unreadable.")
    if answer.get("ok") is not True:
        return failed(_category(answer.get("category")), _said(answer.get("message"), connection))
    schema = checked_schema(answer.get("schema"))
    server = answer.get("server")
    where = f"Connected to {str(server)[:MAX_TEXT]}" if isinstance(server, str) and server else "Connected"
    count = len(schema["tables"])
    if connection.kind == "s3":
        found = len(schema.get("objects", []))
        message = _said(f"{where}; found {found} object{'s' if found != 1 else ''}.", connection)
        return {"ok": True, "category": None, "message": message, "schema": schema}
    if connection.kind == "http" and not count:
        return {"ok": True, "category": None, "message": _said(f"{where}.", connection), "schema": schema}
    message = _said(f"{where}; found {count} table{'s' if count != 1 else ''}.", connection)
    return {"ok": True, "category": None, "message": message, "schema": schema}


def checked_schema(schema: object) -> dict[str, Any]:
    """{"tables": [{"name", "columns": [{"name", "type"}]}]}, bounded, with nothing else in it
    but an s3 store's first objects: "objects": [{"key", "size"}]."""
    tables = schema.get("tables") if isinstance(schema, dict) else None
    kept = []
    for table in tables if isinstance(tables, list) else []:
        if len(kept) >= MAX_TABLES:
            break
        if not isinstance(table, dict) or not isinstance(table.get("name"), str):
            continue
        columns = table.get("columns") if isinstance(table.get("columns"), list) else []
        kept.append(
            {
                "name": table["name"][:MAX_TEXT],
                "columns": [
                    {"name": c["name"][:MAX_TEXT], "type": str(c.get("type") or "")[:MAX_TEXT]}
                    for c in columns[:MAX_COLUMNS]
                    if isinstance(c, dict) and isinstance(c.get("name"), str)
                ],
            }
        )
    objects = schema.get("objects") if isinstance(schema, dict) else None
    if not isinstance(objects, list):
        return {"tables": kept}
    listed = [
        {"key": o["key"][:MAX_KEY], "size": o["size"]}
        for o in objects[:MAX_TABLES]
        if isinstance(o, dict) and isinstance(o.get("key"), str) and isinstance(o.get("size"), int)
    ]
    return {"tables": kept, "objects": listed}


def failed(category: str, message: str) -> dict[str, Any]:
    return {"ok": False, "category": category, "message": message, "schema": None}


def _category(category: object) -> str:
    return category if isinstance(category, str) and category in CATEGORIES else "other"


def _said(message: object, connection: Connection) -> str:
    """A message from the sandbox, bounded, with the connection's secret (should it ever echo it)
    kept out."""
    text = str(message or "The connection failed.")[:MAX_MESSAGE]
    secret = secret_of(connection)
    return text.replace(secret, f"«secret:{connection.name}»") if secret else text


def record(connection: Connection, outcome: dict[str, Any]) -> None:
    """What a test found, on the connection: its outcome, and the schema when it got in (a failed
    test keeps the schema found before)."""
    checked = {
        "ok": outcome["ok"],
        "category": outcome["category"],
        "message": outcome["message"],
        "at": timezone.now().isoformat(),
    }
    changed: dict[str, Any] = {"checked": checked}
    if outcome["ok"]:
        changed["schema"] = outcome["schema"]
    Connection.objects.filter(id=connection.id).update(**changed)
    for field, value in changed.items():
        setattr(connection, field, value)
