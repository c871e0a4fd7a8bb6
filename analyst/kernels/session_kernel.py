"""The session's kernel: a sandbox made on first use (on the host sandbox_hosts places it on),
reused after, and replaced when it is gone or its host is lost (from the session's latest snapshot
when there is one and the new host can read it, so its variables come back), by one process at a
time."""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.utils import timezone

from analyst.connections import egress
from analyst.files.reading import describe_in, is_packed
from analyst.kernels import hosts as sandbox_hosts
from analyst.kernels import kept_sandboxes, live_sandboxes
from analyst.kernels import snapshots as kernel_snapshots
from analyst.kernels.replacement_lock import replacing_sandbox
from analyst.models import AnalysisSession, DataFile, Event, KernelSnapshot, Turn
from sandboxes import (
    Execution,
    ExecutionError,
    FileNotFound,
    RequestTimeout,
    Sandbox,
    SandboxError,
    SandboxExpired,
    SandboxNotFound,
    ServiceUnavailable,
    SnapshotNotFound,
    SnapshotTooLarge,
)

log = logging.getLogger(__name__)

Emit = Callable[[str, dict[str, Any]], None]
GONE = (SandboxNotFound, SandboxExpired)
UNREACHED = (ServiceUnavailable, RequestTimeout)  # its host may be lost: sandbox_hosts.is_lost says
HOST_LOST = "The sandbox host this session ran on could not be reached"
KERNEL_DIED = "KernelDied"
# sandboxd's error for a cell stopped (Stop, Interrupt) that ignored its interrupt: the kernel restarted
KERNEL_RESTARTED = "KernelRestarted"
RESUMED_WHY = {
    "idle": "The kernel had been paused while idle",
    "memory": "The kernel had been paused to free memory",
    "room": "The kernel had been paused to make room for other sessions",
    "cpu": "The kernel had been paused: something it left running kept using the CPU between cells",
    "asked": "The kernel had been paused",
    "restored": "The kernel had been kept on disk",
}
DIED = re.compile(r"The kernel died \((.*)\)\. It was restarted", re.DOTALL)  # sandboxd's words


@dataclass(frozen=True)
class Death:
    """A kernel died in a cell: ``cause`` says so in a sentence, ``text`` adds what came back,
    and ``event`` / ``payload`` is the event that tells the user."""

    cause: str
    text: str
    event: str
    payload: dict[str, Any]


class SessionKernel:
    def __init__(self, session: AnalysisSession, *, emit: Emit) -> None:
        self.session = session
        self.emit = emit
        self.used = False  # a cell ran, so the kernel's state may have changed
        self.death: Death | None = None  # the last cell's kernel died: what came back
        self._sandbox: Sandbox | None = None

    def notice(self, text: str) -> None:
        self.emit("notice", {"text": text})

    def sandbox(self) -> Sandbox:
        """The session's sandbox: connected (resumed if it was paused), restored or created
        (with the session's files). Its owner's other kernels past their limit are paused first."""
        if self._sandbox is not None:
            return self._sandbox
        live_sandboxes.make_room_for(self.session)
        if self.session.sandbox_id:
            try:
                self._sandbox = kept_sandboxes.sandbox(self.session.sandbox_id, url=self._url())
            except GONE:
                return self._replace("The session's previous kernel has expired")
            except UNREACHED:
                if not sandbox_hosts.is_lost(self.session.sandbox_host):
                    raise
                return self._replace(HOST_LOST, lost=self.session.sandbox_host)
            self._tell_if_resumed(self._sandbox)
            self._open_egress(self._sandbox)
            return self._sandbox
        return self._replace("")

    def _tell_if_resumed(self, sandbox: Sandbox) -> None:
        """A quiet line, once per pause, when the kernel came back from one (a plain notice when
        the pause could not keep some variables)."""
        resumed = sandbox.resumed
        if resumed is None:
            return
        told = Event.objects.filter(session=self.session, type="kernel_resumed")
        if told.filter(payload__paused_at=resumed.paused_at).exists():
            return
        text = f"{RESUMED_WHY.get(resumed.why, 'The kernel had been paused')}; it resumed with its variables."
        if resumed.unsaved:
            text += f" These could not be kept and are gone: {', '.join(resumed.unsaved)}."
        self.emit(
            "kernel_resumed",
            {"text": text, "paused_at": resumed.paused_at, "why": resumed.why, "unsaved": resumed.unsaved},
        )

    def _url(self) -> str | None:
        return sandbox_hosts.url(self.session.sandbox_host)

    def _replace(self, why: str, *, lost: str | None = None) -> Sandbox:
        """``lost``: the host the session was on, which no longer answers (None: not lost)."""
        gone = self.session.sandbox_id
        with replacing_sandbox(self.session.id):
            sessions = AnalysisSession.objects.filter(id=self.session.id)
            replaced, host = sessions.values_list("sandbox_id", "sandbox_host").first() or ("", "")
            if replaced and replaced != gone:  # another process replaced it while we waited
                try:
                    self._sandbox = kept_sandboxes.sandbox(replaced, url=sandbox_hosts.url(host))
                    self.session.sandbox_id, self.session.sandbox_host = replaced, host
                    self._open_egress(self._sandbox)
                    return self._sandbox
                except GONE + UNREACHED:
                    pass
            return self._restore_or_create(why, lost=lost)

    def _restore_or_create(self, why: str, *, lost: str | None = None) -> Sandbox:
        avoid = "" if lost is None else lost
        snapshot = kernel_snapshots.latest(self.session)
        if snapshot is not None:
            try:
                return self._restore(snapshot, first_use=not why, lost=lost)
            except SandboxError as exc:
                log.warning("session %s: restoring snapshot %s failed: %s", self.session.id, snapshot.id, exc)
                if lost is None:
                    why = f"The kernel's saved state could not be restored ({exc.message})"
                elif isinstance(exc, SnapshotNotFound):  # a local store: the snapshot went with its host
                    why = f"{HOST_LOST}, and its saved state was kept on that host alone"
                else:
                    why = f"{HOST_LOST}, and its saved state could not be restored on another ({exc.message})"
        if why:
            where = " on another host" if lost is not None else ""
            self.notice(
                f"{why}, so this continues in a fresh one{where}: variables from earlier cells are gone;"
                " uploaded files are restored."
            )
        return self._create(avoid=avoid)

    def _restore(
        self, snapshot: KernelSnapshot, *, first_use: bool = False, lost: str | None = None
    ) -> Sandbox:
        """``first_use``: the session never had a sandbox, so the snapshot is the one it was
        forked or branched with; ``lost``: the host it was on no longer answers."""
        when = timezone.localtime(snapshot.created_at).strftime("%Y-%m-%d %H:%M:%S")
        if first_use:
            text = (
                f"The kernel's variables and files as of {when}, which this session was made with,"
                " were restored."
            )
        elif lost is not None:
            text = (
                f"{HOST_LOST}; the kernel's variables and files as of {when} were restored on another host."
            )
        else:
            text = f"The kernel had stopped; its variables and files as of {when} were restored."
        sandbox, payload = self._bring_back(snapshot, text, avoid="" if lost is None else lost)
        self.emit("kernel_restored", payload if lost is None else {**payload, "code": "host_lost"})
        return sandbox

    def _bring_back(
        self, snapshot: KernelSnapshot, text: str, *, avoid: str = ""
    ) -> tuple[Sandbox, dict[str, Any]]:
        """Adopt a sandbox restored from ``snapshot`` (on its own host while that answers, else
        where sandbox_hosts places it; never on ``avoid``), with the uploads made since; the
        kernel_restored payload that says so in ``text``. Raises SandboxError."""
        host = sandbox_hosts.place_restore(snapshot.host, avoid=avoid)
        sandbox = kernel_snapshots.restore(self.session, snapshot, host=host)
        self._adopt(sandbox, host=host)
        egress.drop_leftovers(self.session, sandbox)  # a snapshot's connection databases not its own
        self._put_files(self.session.files.filter(uploaded_at__gt=snapshot.created_at))
        self._remove_deleted_since(snapshot)
        unsaved = sandbox.restore_report.unsaved if sandbox.restore_report else []
        if unsaved:
            text += f" The kernel reported that these could not be saved and are gone: {', '.join(unsaved)}."
        taken_at = snapshot.created_at.isoformat()
        return sandbox, {"text": text, "snapshot": snapshot.id, "taken_at": taken_at, "unsaved": unsaved}

    def _create(self, *, avoid: str = "", key: str | None = None) -> Sandbox:
        """A fresh sandbox with the session's uploads, on the host sandbox_hosts places it on
        (another one if that turns out to be lost meanwhile). ``key``: the create's idempotency key."""
        host = sandbox_hosts.place(avoid=avoid)
        try:
            sandbox = self._create_on(host, key=key)
        except UNREACHED:
            if not sandbox_hosts.is_lost(host):
                raise
            host = sandbox_hosts.place(avoid=host)
            sandbox = self._create_on(host, key=key)
        self._adopt(sandbox, host=host)
        self._put_files(self.session.files.all())
        return sandbox

    def _create_on(self, host: str, *, key: str | None) -> Sandbox:
        return Sandbox.create(
            ttl_seconds=settings.ANALYST_SANDBOX_TTL,
            metadata=live_sandboxes.metadata_for(self.session),
            # a create retried after a lost answer adopts the first
            idempotency_key=key or str(self.session.id),
            url=sandbox_hosts.url(host),
        )

    def _adopt(self, sandbox: Sandbox, *, host: str) -> None:
        self.session.sandbox_id = sandbox.sandbox_id
        self.session.sandbox_host = host
        self.session.save(update_fields=["sandbox_id", "sandbox_host", "updated_at"])
        self._sandbox = kept_sandboxes.keep(sandbox)
        self._open_egress(sandbox)

    def _open_egress(self, sandbox: Sandbox) -> None:
        """Let the sandbox out to the session's connections (a notice when it cannot be)."""
        try:
            egress.apply(self.session, sandbox)
        except SandboxError as exc:
            log.warning("session %s: egress not opened: %s", self.session.id, exc)
            self.notice(f"The session's connections cannot be reached from this kernel ({exc.message}).")

    def _put_files(self, data_files: Any) -> None:
        """Uploads the sandbox lacks, from our copies; a zip is unpacked again. Only those in the
        sandbox before: one still on its way is written and read by its own placement."""
        assert self._sandbox is not None
        for data_file in data_files.filter(placement=DataFile.Placement.READY):
            with data_file.stored.open("rb") as content:
                self._sandbox.files.write(data_file.path, content)
            if is_packed(data_file):
                describe_in(self._sandbox, data_file)

    def _remove_deleted_since(self, snapshot: KernelSnapshot) -> None:
        """Uploads deleted after ``snapshot`` was taken are in it: take them out again."""
        assert self._sandbox is not None
        present = set(self.session.files.values_list("path", flat=True))
        removed = Event.objects.filter(
            session=self.session, type="file_removed", created_at__gt=snapshot.created_at
        )
        for payload in removed.values_list("payload", flat=True):
            for path in payload.get("paths", []):
                if path not in present:
                    with contextlib.suppress(FileNotFound):  # never in this snapshot
                        self._sandbox.files.remove(path)

    def rewind(self, snapshot: KernelSnapshot | None, *, key: str) -> None:
        """Put the kernel back in an earlier state: a sandbox restored from ``snapshot``, or a
        fresh one with the uploads when None (no code had run then); the session's sandbox
        until now is killed. ``key`` makes the fresh one's create idempotent. Raises SandboxError."""
        old, old_host = self.session.sandbox_id, self.session.sandbox_host
        with replacing_sandbox(self.session.id):
            if snapshot is None:
                sandbox = self._create(key=key)
                text = (
                    "The kernel was put back as it was before this question: empty, as no code had"
                    " run yet; uploaded files are there."
                )
                self.emit("notice", {"text": text, "code": "kernel_rewound"})
            else:
                when = timezone.localtime(snapshot.created_at).strftime("%Y-%m-%d %H:%M:%S")
                text = (
                    "The kernel was put back as it was before this question (its variables and"
                    f" files as of {when})."
                )
                sandbox, payload = self._bring_back(snapshot, text)
                self.emit("kernel_restored", {**payload, "code": "kernel_rewound"})
        if old and old != sandbox.sandbox_id:
            try:
                self._discard(kept_sandboxes.sandbox(old, url=sandbox_hosts.url(old_host)))
            except SandboxError:
                kept_sandboxes.forget(old)  # gone already

    def run(self, code: str, **handlers: Any) -> Execution:
        """Run a cell, in a replaced sandbox if the session's one vanished since we connected.

        A kernel that died in the cell (out of memory, a crash) comes back from the session's
        latest snapshot: the execution's error then says what came back and what was lost (so
        the model reads it), ``death`` holds the event that says so, for ``announce``."""
        self.used = True
        self.death = None
        try:
            execution = self.sandbox().run_code(code, timeout=settings.ANALYST_CELL_TIMEOUT, **handlers)
        except GONE:
            kept_sandboxes.forget(self.session.sandbox_id)
            self._sandbox = None
            self._replace("The kernel expired while idle")
            execution = self.sandbox().run_code(code, timeout=settings.ANALYST_CELL_TIMEOUT, **handlers)
        except UNREACHED as exc:
            self.replace_if_host_lost(exc)
            execution = self.sandbox().run_code(code, timeout=settings.ANALYST_CELL_TIMEOUT, **handlers)
        error = execution.error
        if error is not None and (
            error.name == KERNEL_DIED or error.name == KERNEL_RESTARTED and not self._restarting()
        ):
            self.death = self._recover(error)
            execution.error = ExecutionError(error.name, self.death.text, "")
        return execution

    def _restarting(self) -> bool:
        """Whether the user asked for a restart, which empties the kernel anyway (turns.do_restart
        stores it before it stops the running turn)."""
        return self.session.turns.filter(kind=Turn.Kind.RESTART).exclude(status__in=Turn.FINISHED).exists()

    def restart(self) -> None:
        """The session's kernel replaced by a fresh one in the same sandbox (which is connected,
        or restored first if it had gone: either way what follows starts empty)."""
        self.used = True
        try:
            self.sandbox().default_context.restart()
        except UNREACHED as exc:
            self.replace_if_host_lost(exc)
            self.sandbox().default_context.restart()

    def replace_if_host_lost(self, unreached: SandboxError) -> None:
        """``unreached`` (ServiceUnavailable, RequestTimeout) came from the session's sandbox:
        when its host is lost, bring the kernel back on another and say so; else raise it."""
        if not sandbox_hosts.is_lost(self.session.sandbox_host):
            raise unreached
        kept_sandboxes.forget(self.session.sandbox_id)
        self._sandbox = None
        self._replace(HOST_LOST, lost=self.session.sandbox_host)

    def announce(self) -> None:
        """Emit what came back after a kernel died in the last cell (after that cell's events)."""
        if self.death is not None:
            self.emit(self.death.event, self.death.payload)

    def _recover(self, error: ExecutionError) -> Death:
        """sandboxd restarted the kernel empty (it died, or a stopped cell ignored its interrupt):
        put the latest snapshot in its place."""
        cause = _cause(error)
        empty = "so it continues empty: variables and imports are gone, files in the workdir are kept."
        dead = self._sandbox
        with replacing_sandbox(self.session.id):
            snapshot = kernel_snapshots.latest(self.session)
            if snapshot is None:
                text = f"{cause}; no saved state of it exists, {empty}"
                return Death(cause, text, "notice", {"text": text})
            when = timezone.localtime(snapshot.created_at).strftime("%H:%M:%S")
            text = (
                f"{cause}; its variables and files as of {when} were restored. Lost: whatever this"
                " cell and any since that snapshot changed."
            )
            try:
                sandbox, payload = self._bring_back(snapshot, text)
            except SandboxError as exc:
                log.warning("session %s: restoring snapshot %s failed: %s", self.session.id, snapshot.id, exc)
                text = f"{cause}; its saved state could not be restored ({exc.message}), {empty}"
                return Death(cause, text, "notice", {"text": text})
        if dead is not None and dead is not sandbox:
            self._discard(dead)
        return Death(cause, payload["text"], "kernel_restored", payload)

    @staticmethod
    def _discard(sandbox: Sandbox) -> None:
        try:
            sandbox.kill()
        except SandboxError as exc:
            log.info("could not kill replaced sandbox %s: %s", sandbox.sandbox_id, exc)
        kept_sandboxes.forget(sandbox.sandbox_id)

    def save(self, turn: Turn) -> None:
        """Snapshot the kernel after a turn that ran code; a failure is a notice, not an error."""
        if not (self.used and settings.ANALYST_SNAPSHOT_AFTER_TURN and self._sandbox):
            return
        # From here the turn's work is done: a question sent meanwhile queues behind it.
        Turn.objects.filter(id=turn.id).update(saving=True)
        self.emit("saving", {})  # the page says so, and that a question sent now starts next
        try:
            kernel_snapshots.take(self.session, self._sandbox, turn)
        except kernel_snapshots.StateNotSaved as exc:  # past the owner's storage limit
            self.emit("notice", {"text": str(exc), "code": "state_not_saved"})
        except SnapshotTooLarge:
            self.notice(
                "The kernel's variables are too large to save, so they will not survive the kernel"
                " expiring; files in the workdir are kept."
            )
        except SandboxError as exc:
            log.warning("session %s: snapshot after turn %s failed: %s", self.session.id, turn.id, exc)
            self.notice(f"The kernel's state could not be saved ({exc.message}).")


def _cause(error: ExecutionError) -> str:
    """Why sandboxd restarted the kernel under a cell, in a sentence."""
    if error.name == KERNEL_RESTARTED:
        return "The cell was stopped, and as it ignored the interrupt its kernel was restarted"
    match = DIED.match(error.value)
    reason = match.group(1).removeprefix("the kernel process ") if match else error.value
    said = "out of memory?" if "signal 9" in reason else reason
    return f"The kernel died while running this cell ({said})"


def interrupt_cell(session: AnalysisSession) -> bool:
    """Interrupt the cell running in the session's kernel, if it has one: whether the kernel
    acknowledged it (sandboxd ends a cell that ignores it, restarting its kernel). Its own
    connection, so any thread may call it."""
    sandbox_id = session.sandbox_id
    if not sandbox_id:
        return False
    try:
        sandbox = Sandbox.connect(sandbox_id, url=sandbox_hosts.url(session.sandbox_host))
    except SandboxError:
        return False  # gone already: nothing runs there
    try:
        return sandbox.default_context.interrupt()
    except SandboxError:
        log.info("could not interrupt sandbox %s", sandbox_id)
        return False
    finally:
        sandbox.close()


def release(session: AnalysisSession) -> None:
    """End the session's sandbox, if it has one (a paused one is not resumed first). Its state
    stays in its latest snapshot, brought back should the session run code again."""
    if not session.sandbox_id:
        return
    kept_sandboxes.forget(session.sandbox_id)
    with contextlib.suppress(SandboxError):  # gone already
        Sandbox.kill_by_id(session.sandbox_id, url=sandbox_hosts.url(session.sandbox_host))
