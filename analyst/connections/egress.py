"""A sandbox let out to its session's connections and nowhere else: their endpoints and the
kernel's config (secrets in the clear only here, on their way to sandboxd) put with the SDK's
set_egress, and the file connections' databases put in the workdir's hidden .connections/."""

from __future__ import annotations

import contextlib
from typing import Any

from django.conf import settings

from analyst.connections import kinds
from analyst.connections.attachments import attached, file_paths, session_env
from analyst.connections.registry import secret_of
from analyst.models import AnalysisSession, Connection
from sandboxes import FileNotFound, Sandbox


def apply(session: AnalysisSession, sandbox: Sandbox, *, always: bool = False) -> dict[str, Any] | None:
    """Give ``sandbox`` the session's attached connections and secret environment variables;
    sandboxd's answer ({"proxy", "ports"}). A session with neither makes no request unless
    ``always`` (a detach: what the sandbox had is taken away). Raises SandboxError (code
    "egress_unavailable" where the sandbox's driver cannot)."""
    connections = attached(session)
    env = session_env(session)
    if not connections and not env and not always:
        return None
    return open_to(sandbox, connections, env=env)


def drop_leftovers(session: AnalysisSession, sandbox: Sandbox) -> None:
    """A sandbox restored from a snapshot holds the databases of the file connections attached
    when it was taken: a session with no connections now (a fork by someone else, say) has them
    taken out. (One with connections had apply() put exactly its own.) Raises SandboxError."""
    if not attached(session):
        put_files(sandbox, [])


def open_to(sandbox: Sandbox, connections: list[Connection], *, env: dict[str, str]) -> dict[str, Any]:
    """Let ``sandbox`` reach exactly ``connections`` (replacing what it could reach before)."""
    put_files(sandbox, connections)
    endpoints = []
    for connection in connections:
        found = kinds.endpoint(connection.kind, connection.url, connection.options)
        if found is not None:
            endpoints.append(
                {"name": connection.name, "host": found.host, "port": found.port, "mode": found.mode}
            )
    return sandbox.set_egress(endpoints, kernel_config(connections, env=env))


def kernel_config(connections: list[Connection], *, env: dict[str, str]) -> dict[str, Any]:
    """What the kernel's connection() and sql() read (/run/kernel/egress.json's "config")."""
    return {
        "connections": {
            c.name: {
                "kind": c.kind,
                "url": c.url,
                "secret": secret_of(c),
                "read_only": c.read_only,
                "options": c.options,
            }
            for c in connections
        },
        "files": file_paths(connections),
        "env": env,
        "sql_timeout": settings.ANALYST_SQL_TIMEOUT,
        "sql_max_rows": settings.ANALYST_SQL_MAX_ROWS,
    }


def put_files(sandbox: Sandbox, connections: list[Connection]) -> None:
    """The file connections' databases in the workdir (rewritten when their size differs from
    ours), and those of connections no longer attached taken out."""
    wanted = {kinds.file_path(c.name, c.kind): c for c in connections if kinds.is_file_kind(c.kind)}
    try:
        present = {entry.path: entry.size for entry in sandbox.files.list(kinds.FOLDER)}
    except FileNotFound:
        present = {}
    for path in set(present) - set(wanted):
        with contextlib.suppress(FileNotFound):
            sandbox.files.remove(path)
    for path, connection in wanted.items():
        if present.get(path) != connection.file.size:
            with connection.file.open("rb") as content:
                sandbox.files.write(path, content)
