"""The session's kernel: a sandbox made on first use, reused after, and replaced when it is gone."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings

from analyst.agent import connections
from analyst.models import AnalysisSession
from sandboxes import Execution, Sandbox, SandboxExpired, SandboxNotFound

Notice = Callable[[str], None]


class SessionKernel:
    def __init__(self, session: AnalysisSession, *, notice: Notice) -> None:
        self.session = session
        self.notice = notice
        self._sandbox: Sandbox | None = None

    def sandbox(self) -> Sandbox:
        """The session's sandbox, connected (or created, with the session's files) on first use."""
        if self._sandbox is not None:
            return self._sandbox
        if self.session.sandbox_id:
            try:
                self._sandbox = connections.sandbox(self.session.sandbox_id)
                return self._sandbox
            except (SandboxNotFound, SandboxExpired):
                self.notice(
                    "The session's previous kernel has expired, so this continues in a fresh one:"
                    " variables from earlier cells are gone; uploaded files are restored."
                )
        return self._create()

    def _create(self) -> Sandbox:
        sandbox = Sandbox.create(
            ttl_seconds=settings.ANALYST_SANDBOX_TTL, metadata={"session": str(self.session.id)}
        )
        for data_file in self.session.files.all():
            with data_file.stored.open("rb") as content:
                sandbox.files.write(data_file.path, content)
        self.session.sandbox_id = sandbox.sandbox_id
        self.session.save(update_fields=["sandbox_id", "updated_at"])
        self._sandbox = connections.keep(sandbox)
        return sandbox

    def run(self, code: str, **handlers: Any) -> Execution:
        """Run a cell, in a fresh sandbox if the session's one vanished since we connected."""
        try:
            return self.sandbox().run_code(code, timeout=settings.ANALYST_CELL_TIMEOUT, **handlers)
        except (SandboxNotFound, SandboxExpired):
            connections.forget(self.session.sandbox_id)
            self._sandbox = None
            self.session.sandbox_id = ""
            self.notice("The kernel expired while idle; the cell runs in a fresh one (files restored).")
            return self.sandbox().run_code(code, timeout=settings.ANALYST_CELL_TIMEOUT, **handlers)
