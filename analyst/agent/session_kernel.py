"""The session's kernel: a sandbox made on first use, reused after, and replaced when it is gone
(from the session's latest snapshot when there is one, so its variables come back), by one
process at a time."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.utils import timezone

from analyst import kernel_snapshots
from analyst.agent import connections
from analyst.agent.replacement_lock import replacing_sandbox
from analyst.models import AnalysisSession, KernelSnapshot, Turn
from sandboxes import Execution, Sandbox, SandboxError, SandboxExpired, SandboxNotFound, SnapshotTooLarge

log = logging.getLogger(__name__)

Emit = Callable[[str, dict[str, Any]], None]
GONE = (SandboxNotFound, SandboxExpired)


class SessionKernel:
    def __init__(self, session: AnalysisSession, *, emit: Emit) -> None:
        self.session = session
        self.emit = emit
        self.used = False  # a cell ran, so the kernel's state may have changed
        self._sandbox: Sandbox | None = None

    def notice(self, text: str) -> None:
        self.emit("notice", {"text": text})

    def sandbox(self) -> Sandbox:
        """The session's sandbox: connected, restored or created (with the session's files)."""
        if self._sandbox is not None:
            return self._sandbox
        if self.session.sandbox_id:
            try:
                self._sandbox = connections.sandbox(self.session.sandbox_id)
                return self._sandbox
            except GONE:
                return self._replace("The session's previous kernel has expired")
        return self._replace("")

    def _replace(self, why: str) -> Sandbox:
        gone = self.session.sandbox_id
        with replacing_sandbox(self.session.id):
            sessions = AnalysisSession.objects.filter(id=self.session.id)
            replaced = sessions.values_list("sandbox_id", flat=True).first()
            if replaced and replaced != gone:  # another process replaced it while we waited
                try:
                    self._sandbox = connections.sandbox(replaced)
                    self.session.sandbox_id = replaced
                    return self._sandbox
                except GONE:
                    pass
            return self._restore_or_create(why)

    def _restore_or_create(self, why: str) -> Sandbox:
        snapshot = kernel_snapshots.latest(self.session)
        if snapshot is not None:
            try:
                return self._restore(snapshot)
            except SandboxError as exc:
                log.warning("session %s: restoring snapshot %s failed: %s", self.session.id, snapshot.id, exc)
                why = f"The kernel's saved state could not be restored ({exc.message})"
        if why:
            self.notice(
                f"{why}, so this continues in a fresh one: variables from earlier cells are gone;"
                " uploaded files are restored."
            )
        return self._create()

    def _restore(self, snapshot: KernelSnapshot) -> Sandbox:
        sandbox = kernel_snapshots.restore(self.session, snapshot)
        self._adopt(sandbox)
        self._put_files(self.session.files.filter(uploaded_at__gt=snapshot.created_at))
        unsaved = sandbox.restore_report.unsaved if sandbox.restore_report else []
        when = timezone.localtime(snapshot.created_at).strftime("%Y-%m-%d %H:%M:%S")
        text = f"The kernel had stopped; its variables and files as of {when} were restored."
        if unsaved:
            text += f" These could not be saved and are gone: {', '.join(unsaved)}."
        taken_at = snapshot.created_at.isoformat()
        payload = {"text": text, "snapshot": snapshot.id, "taken_at": taken_at, "unsaved": unsaved}
        self.emit("kernel_restored", payload)
        return sandbox

    def _create(self) -> Sandbox:
        sandbox = Sandbox.create(
            ttl_seconds=settings.ANALYST_SANDBOX_TTL, metadata={"session": str(self.session.id)}
        )
        self._adopt(sandbox)
        self._put_files(self.session.files.all())
        return sandbox

    def _adopt(self, sandbox: Sandbox) -> None:
        self.session.sandbox_id = sandbox.sandbox_id
        self.session.save(update_fields=["sandbox_id", "updated_at"])
        self._sandbox = connections.keep(sandbox)

    def _put_files(self, data_files: Any) -> None:
        assert self._sandbox is not None
        for data_file in data_files:
            with data_file.stored.open("rb") as content:
                self._sandbox.files.write(data_file.path, content)

    def run(self, code: str, **handlers: Any) -> Execution:
        """Run a cell, in a replaced sandbox if the session's one vanished since we connected."""
        self.used = True
        try:
            return self.sandbox().run_code(code, timeout=settings.ANALYST_CELL_TIMEOUT, **handlers)
        except GONE:
            connections.forget(self.session.sandbox_id)
            self._sandbox = None
            self._replace("The kernel expired while idle")
            return self.sandbox().run_code(code, timeout=settings.ANALYST_CELL_TIMEOUT, **handlers)

    def save(self, turn: Turn) -> None:
        """Snapshot the kernel after a turn that ran code; a failure is a notice, not an error."""
        if not (self.used and settings.ANALYST_SNAPSHOT_AFTER_TURN and self._sandbox):
            return
        # From here the turn's work is done: a question sent meanwhile queues behind it.
        Turn.objects.filter(id=turn.id).update(saving=True)
        try:
            kernel_snapshots.take(self.session, self._sandbox, turn)
        except SnapshotTooLarge:
            self.notice(
                "The kernel's variables are too large to save, so they will not survive the kernel"
                " expiring; files in the workdir are kept."
            )
        except SandboxError as exc:
            log.warning("session %s: snapshot after turn %s failed: %s", self.session.id, turn.id, exc)
            self.notice(f"The kernel's state could not be saved ({exc.message}).")
