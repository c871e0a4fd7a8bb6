"""A session's running sandbox kept in step with its connections: opened to one as it is
attached (and its schema read there), closed to one as it is detached, changed or deleted, and
given a change of the session's secret variables; and a connection's Test in a throwaway sandbox."""

from __future__ import annotations

import logging

from analyst.connections import attachments, checking, egress
from analyst.kernels import hosts as sandbox_hosts
from analyst.kernels.session_files import live_sandbox
from analyst.models import AnalysisSession, Connection
from sandboxes import SandboxError

log = logging.getLogger(__name__)


def attach(session: AnalysisSession, connection: Connection) -> bool:
    """Attach ``connection`` to ``session``: its running sandbox is let out to it at once, and
    its schema read again (there, or from a throwaway sandbox when none runs). Whether it was
    not attached already. Raises BadConnection."""
    added = attachments.do_attach(session=session, connection=connection)
    with live_sandbox(session) as sandbox:
        if sandbox is None:
            test(connection)
            return added
        try:
            egress.apply(session, sandbox)
            checking.record(connection, checking.probe(sandbox, connection))
        except SandboxError as exc:
            log.warning(
                "session %s: connection %s not opened in its sandbox: %s", session.id, connection.id, exc
            )
    return added


def reopen(session: AnalysisSession) -> None:
    """The session's running sandbox (if any) let out to what is attached now, and nothing else."""
    with live_sandbox(session) as sandbox:
        if sandbox is None:
            return
        try:
            egress.apply(session, sandbox, always=True)
        except SandboxError as exc:
            log.warning("session %s: its sandbox's egress could not be changed: %s", session.id, exc)


def test(connection: Connection) -> dict[str, object]:
    """Connect from a throwaway sandbox, as a session would: what was found, or why it failed."""
    return checking.test(connection, url=_new_sandbox_url())


def _new_sandbox_url() -> str | None:
    try:
        return sandbox_hosts.url(sandbox_hosts.place())
    except SandboxError:
        return None  # SANDBOXD_URL: the test then says why no sandbox started
