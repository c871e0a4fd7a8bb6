"""Pausing and resuming sandboxes: on request, after an idle while, and to make room.

A pause snapshots the sandbox (its files and every context's variables, as ``snapshot`` does),
then stops its kernels and frees its workdir and uid: a paused sandbox costs disk, no memory.
Any use of it resumes it under the same id, from a warm kernel when the pool has one.

- Idle: a sandbox unused for ``idle_pause_seconds`` is paused, unless it is running a cell, a
  thread the user started is still running, or some of its variables cannot be pickled (an idle
  pause never loses state). Such a sandbox is held, and its info says why, for at most
  ``hold_limit_seconds``; then it is paused anyway.
- Room: a new sandbox is admitted while fewer than ``max_sandboxes`` run and the host keeps
  ``memory_reserve`` available beside it; otherwise the least recently used idle sandboxes are
  paused first, and only when none is idle is the new one refused (CapacityExceeded).
- Pressure: while the host's available memory is under the reserve, the least recently used
  idle sandbox is paused, one a tick.
- CPU: a sandbox whose processes burn ``idle_cpu_seconds`` of CPU within ``idle_cpu_window``
  seconds while no cell runs (work a cell left behind: a process or a thread) is paused, which
  stops them and keeps its state; its next cell says so (``take_notice``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable, Collection
from pathlib import Path

from sandboxes.errors import (
    CapacityExceeded,
    ContextBusy,
    SandboxError,
    SandboxExpired,
    SnapshotCorrupt,
    SnapshotFailed,
    SnapshotNotFound,
    TemplateNotFound,
)
from sandboxes.kernels.kernel import KernelDied, in_own_namespace
from sandboxes.server.paused_records import PausedRecords, PausedSandbox
from sandboxes.server.pausing import background_work
from sandboxes.server.pausing.idle_cpu import IdleCpuMeter, tree_cpu_seconds
from sandboxes.server.pool_sizing import memory_available
from sandboxes.server.registry import Registry
from sandboxes.server.sandbox import ServerSandbox
from sandboxes.server.snapshots.service import Snapshots

log = logging.getLogger(__name__)
BACKGROUND_WORK_CELL = in_own_namespace(
    Path(background_work.__file__).read_text() + "\nreport()", "__sandbox_background_work__"
)
BACKGROUND_CHECK_TIMEOUT = 5.0
RECHECK_SECONDS = 60.0  # a held sandbox is looked at again this often
NEW_KERNEL_BYTES = 256 << 20  # what admitting one more sandbox is expected to cost at first
PRESSURE_MIN_IDLE = 30.0  # under memory pressure, a sandbox idle this long may be paused
WATCH_SECONDS = 1.0
# Resuming failed for good: the sandbox is gone, and a caller treats it as expired.
LOST = (SnapshotNotFound, SnapshotCorrupt, SnapshotFailed, TemplateNotFound)


class Pauser:
    def __init__(
        self,
        registry: Registry,
        snapshots: Snapshots,
        records: PausedRecords,
        *,
        idle_pause_seconds: float,
        hold_limit_seconds: float,
        memory_reserve: int,
        memory: Callable[[], int] = memory_available,
        idle_cpu_seconds: float = 0.0,
        idle_cpu_window: float = 60.0,
    ) -> None:
        self.registry = registry
        self.snapshots = snapshots
        self.records = records
        self.idle_pause_seconds = idle_pause_seconds
        self.hold_limit_seconds = hold_limit_seconds
        self.memory_reserve = memory_reserve
        self.memory = memory
        self._pausing: dict[str, asyncio.Task[PausedSandbox]] = {}
        self._resuming: dict[str, asyncio.Task[ServerSandbox]] = {}
        self._checked: dict[str, float] = {}  # held sandbox → when it was last looked at
        # sandbox → its last_used when an idle pause found state it could not save whole
        self._unsavable: dict[str, float] = {}
        self._task: asyncio.Task[None] | None = None
        self.idle_cpu = IdleCpuMeter(budget=idle_cpu_seconds, window=idle_cpu_window)
        self._notices: dict[str, str] = {}  # sandbox → what its next cell says first
        registry.make_room = self.make_room
        registry.resume = self.resume

    @property
    def paused(self) -> dict[str, PausedSandbox]:
        return self.registry.paused

    def start(self) -> None:
        """Take back the sandboxes paused before a restart, and watch for idle ones."""
        self.paused.update(self.records.load_all())
        if self.paused:
            log.info("%d paused sandboxes can be resumed", len(self.paused))
        self._task = asyncio.create_task(self._watch_forever())

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    # Using a sandbox ------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def using(self, sandbox_id: str, *, touch: bool = True) -> AsyncIterator[ServerSandbox]:
        """The live sandbox, resumed first if it is paused, not paused while the block runs."""
        sandbox = await self.live(sandbox_id, touch=touch)
        sandbox.users += 1
        try:
            yield sandbox
        finally:
            sandbox.users -= 1

    async def live(self, sandbox_id: str, *, touch: bool = True) -> ServerSandbox:
        """The sandbox, running: a pause under way is waited for, then undone."""
        pausing = self._pausing.get(sandbox_id)
        if pausing is not None:
            await asyncio.wait([pausing])
        if sandbox_id in self._resuming or sandbox_id in self.paused:
            return await self.resume(sandbox_id)
        return self.registry.get(sandbox_id, touch=touch)

    def describe(self, sandbox_id: str) -> dict[str, object]:
        """The sandbox's info, live or paused, without resuming it."""
        if sandbox_id in self.paused and sandbox_id not in self._resuming:
            return self.paused[sandbox_id].info()
        return self.registry.get(sandbox_id, touch=False).info()

    async def kill(self, sandbox_id: str) -> None:
        pausing = self._pausing.get(sandbox_id)
        if pausing is not None:
            await asyncio.wait([pausing])
        resuming = self._resuming.get(sandbox_id)
        if resuming is not None:
            await asyncio.wait([resuming])
        if sandbox_id in self.paused:
            await self._forget(self.paused.pop(sandbox_id))
            return
        await self.registry.kill(sandbox_id)

    def set_ttl(self, sandbox_id: str, seconds: int) -> dict[str, object]:
        record = self.paused.get(sandbox_id)
        if record is None or sandbox_id in self._resuming:
            sandbox = self.registry.get(sandbox_id)
            sandbox.set_ttl(seconds)
            return sandbox.info()
        record.ttl_seconds, record.last_used = seconds, time.time()
        self.records.save(record)
        return record.info()

    # Pausing --------------------------------------------------------------------------------

    async def pause(self, sandbox_id: str, *, why: str = "asked") -> PausedSandbox:
        """Pause the live sandbox (a paused one is left as it is). Raises ContextBusy while a
        cell runs or a request is being served with it."""
        if sandbox_id in self.paused and sandbox_id not in self._resuming:
            return self.paused[sandbox_id]
        sandbox = await self.live(sandbox_id)
        return await self._pause(sandbox, why=why, whole=False)

    async def _pause(self, sandbox: ServerSandbox, *, why: str, whole: bool) -> PausedSandbox:
        running = self._pausing.get(sandbox.id)
        if running is not None:
            return await asyncio.shield(running)
        if sandbox.busy or sandbox.users:
            raise ContextBusy(f"sandbox {sandbox.id} is running a cell or serving a request")
        task = asyncio.create_task(self._stop(sandbox, why=why, whole=whole))
        self._pausing[sandbox.id] = task
        try:
            return await asyncio.shield(task)
        finally:
            self._pausing.pop(sandbox.id, None)

    async def _stop(self, sandbox: ServerSandbox, *, why: str, whole: bool) -> PausedSandbox:
        started = time.monotonic()
        info = await self.snapshots.take(sandbox, whole=whole)
        unsaved = sorted({name for context in info["contexts"] for name in context["unsaved"]})
        record = PausedSandbox(
            id=sandbox.id,
            template=sandbox.template,
            metadata=sandbox.metadata,
            created_at=sandbox.created_at,
            ttl_seconds=sandbox.ttl_seconds,
            last_used=time.time() - (time.monotonic() - sandbox.last_used),
            snapshot_id=info["id"],
            why=why,
            default_context_id=sandbox.default_context_id,
            context_ids=list(sandbox.contexts),
            unsaved=unsaved,
            idempotency_key=sandbox.idempotency_key,
        )
        await asyncio.to_thread(self.records.save, record)
        self.paused[sandbox.id] = record
        self.registry.sandboxes.pop(sandbox.id, None)
        self._checked.pop(sandbox.id, None)
        self._unsavable.pop(sandbox.id, None)
        try:
            await sandbox.kill()
        finally:
            self.registry.release(sandbox.id)
        log.info(
            "paused sandbox %s (%s) in %.0f ms: %d bytes",
            sandbox.id,
            why,
            1000 * (time.monotonic() - started),
            info["size"],
        )
        return record

    # Resuming -------------------------------------------------------------------------------

    async def resume(self, sandbox_id: str) -> ServerSandbox:
        """The paused sandbox running again under its id, with its files and variables (the
        restore report in its ``resumed``). One resume at a time per sandbox; a resume that can
        never succeed (its snapshot lost or damaged) removes it: SandboxExpired."""
        task = self._resuming.get(sandbox_id)
        if task is None:
            if sandbox_id not in self.paused:
                return self.registry.get(sandbox_id)
            task = asyncio.create_task(self._start(self.paused[sandbox_id]))
            self._resuming[sandbox_id] = task
            task.add_done_callback(lambda _: self._resuming.pop(sandbox_id, None))
        return await asyncio.shield(task)

    async def _start(self, record: PausedSandbox) -> ServerSandbox:
        started = time.monotonic()
        try:
            sandbox, report = await self.snapshots.restore(
                record.snapshot_id,
                ttl_seconds=record.ttl_seconds,
                metadata=record.metadata,
                replay=False,
                sandbox_id=record.id,
            )
        except LOST as exc:
            log.error("paused sandbox %s could not be resumed: %s", record.id, exc)
            self.paused.pop(record.id, None)
            await self._forget(record)
            self.registry.remember_expired(record.id)
            raise SandboxExpired(f"sandbox {record.id} was paused and could not be resumed: {exc}") from None
        self.paused.pop(record.id, None)
        await self._forget(record, key=False)
        if record.why == "cpu":
            self._notices[record.id] = cpu_notice(self.idle_cpu, record.unsaved)
        sandbox.created_at = record.created_at
        sandbox.idempotency_key = record.idempotency_key
        # What took longer than the restore's limit to unpickle is gone as well as the unsaved.
        late = {name for context in report["contexts"] for name in context.get("late", [])}
        sandbox.resumed = {
            "paused_at": record.paused_at,
            "why": record.why,
            "seconds": round(time.monotonic() - started, 3),
            "unsaved": sorted({*record.unsaved, *late}),
            "contexts": report["contexts"],
        }
        log.info("resumed sandbox %s in %.0f ms", record.id, 1000 * (time.monotonic() - started))
        return sandbox

    async def add_paused(
        self, snapshot_id: str, *, ttl_seconds: int, metadata: dict[str, str] | None
    ) -> PausedSandbox:
        """A new sandbox in a snapshot's state, paused until its first use: no kernel starts now
        (a session moved to another host, or opened again, costs nothing until it is used)."""
        copy_id, manifest = await self.snapshots.copy(snapshot_id)
        try:
            template, contexts = str(manifest["template"]), list(manifest["contexts"])
            saved_metadata = dict(manifest["metadata"])
            default = next((str(c["id"]) for c in contexts if c.get("default")), "")
        except (KeyError, TypeError, ValueError):
            await asyncio.to_thread(self.snapshots.store.delete, copy_id)
            raise SnapshotCorrupt("the snapshot's manifest is incomplete") from None
        if template not in self.registry.specs:
            await asyncio.to_thread(self.snapshots.store.delete, copy_id)
            raise TemplateNotFound(f"the snapshot needs template {template!r}, not on this service")
        now = time.time()
        record = PausedSandbox(
            id=uuid.uuid4().hex,
            template=template,
            metadata=saved_metadata if metadata is None else metadata,
            created_at=now,
            ttl_seconds=ttl_seconds,
            last_used=now,
            snapshot_id=copy_id,
            why="restored",
            default_context_id=default,
            context_ids=[str(c["id"]) for c in contexts],
            unsaved=sorted({name for c in contexts for name in (c.get("unsaved") or {})}),
        )
        await asyncio.to_thread(self.records.save, record)
        self.paused[record.id] = record
        return record

    async def _forget(self, record: PausedSandbox, *, key: bool = True) -> None:
        """Remove a paused sandbox's record and snapshot (``key``: and its idempotency key)."""
        if key:
            self.registry.forget_key(record)
        await asyncio.to_thread(self.records.remove, record.id)
        with contextlib.suppress(SnapshotNotFound):
            await asyncio.to_thread(self.snapshots.store.delete, record.snapshot_id)

    # Room -----------------------------------------------------------------------------------

    def _short_of_room(self) -> str | None:
        limit = self.registry.config.max_sandboxes
        if len(self.registry.sandboxes) >= limit:
            return f"this service runs at most {limit} sandboxes at once"
        if self.memory() < self.memory_reserve + NEW_KERNEL_BYTES:
            return "the host is short of memory"
        return None

    async def make_room(self) -> None:
        """Pause the least recently used idle sandboxes until one more fits. Raises
        CapacityExceeded when none is idle."""
        tried: set[str] = set()
        while (short := self._short_of_room()) is not None:
            candidate = self._least_recently_used(min_idle=0.0, skip=tried)
            if candidate is None:
                raise CapacityExceeded(f"{short}, and none of the running sandboxes is idle to pause")
            tried.add(candidate.id)
            await self._try_pause(candidate, why="room")

    def _least_recently_used(
        self, *, min_idle: float, skip: Collection[str] = frozenset()
    ) -> ServerSandbox | None:
        idle = [
            s
            for s in self.registry.sandboxes.values()
            if s.id not in skip and self._pausable(s) and s.idle_seconds() >= min_idle
        ]
        return min(idle, key=lambda s: s.last_used, default=None)

    def _pausable(self, sandbox: ServerSandbox) -> bool:
        """Nothing is being done with it: no cell, no request, no pause or resume under way."""
        busy = sandbox.busy or sandbox.users or not sandbox.contexts
        return not busy and sandbox.id not in self._pausing and sandbox.id not in self._resuming

    async def _try_pause(self, sandbox: ServerSandbox, *, why: str, whole: bool = False) -> bool:
        try:
            await self._pause(sandbox, why=why, whole=whole)
        except ContextBusy:
            return False
        except SnapshotFailed as exc:
            if not whole:
                log.warning("could not pause sandbox %s: %s", sandbox.id, exc)
                return False
            sandbox.pause_held = f"pausing it would lose state: {exc.message}"
            self._unsavable[sandbox.id] = sandbox.last_used  # until it is used again
            return False
        except SandboxError as exc:
            log.warning("could not pause sandbox %s: %s", sandbox.id, exc)
            return False
        return True

    # Watching -------------------------------------------------------------------------------

    async def _watch_forever(self) -> None:
        while True:
            await asyncio.sleep(WATCH_SECONDS)
            try:
                await self.watch_once()
            except Exception:
                log.exception("the pause watcher failed; it goes on")

    def take_notice(self, sandbox_id: str) -> str:
        """What the sandbox's next cell says before its output (then nothing), or ""."""
        return self._notices.pop(sandbox_id, "")

    async def watch_once(self) -> None:
        self._expire_paused()
        await self._stop_idle_cpu()
        for sandbox in sorted(self.registry.sandboxes.values(), key=lambda s: s.last_used):
            idle = sandbox.idle_seconds()
            if not self._pausable(sandbox) or idle < self.idle_pause_seconds:
                continue
            if not await self._held(sandbox):
                # Within the hold limit an idle pause never drops what cannot be pickled.
                await self._try_pause(sandbox, why="idle", whole=idle < self.hold_limit_seconds)
        tried: set[str] = set()
        while self.memory() < self.memory_reserve:
            candidate = self._least_recently_used(min_idle=PRESSURE_MIN_IDLE, skip=tried)
            if candidate is None:
                break
            tried.add(candidate.id)
            log.warning("the host is short of memory: pausing sandbox %s", candidate.id)
            await self._try_pause(candidate, why="memory")

    async def _stop_idle_cpu(self) -> None:
        """Pause each sandbox whose processes used the idle CPU budget since it was last used."""
        if self.idle_cpu.budget <= 0:
            return
        self.idle_cpu.forget_all_but(set(self.registry.sandboxes))
        for sandbox in list(self.registry.sandboxes.values()):
            if not self._pausable(sandbox):
                self.idle_cpu.forget(sandbox.id)
                continue
            cpu = await asyncio.to_thread(_cpu_seconds, sandbox)
            if cpu is None or not self._pausable(sandbox):  # a kernel restarting, a cell begun
                self.idle_cpu.forget(sandbox.id)
                continue
            used = self.idle_cpu.used(sandbox.id, last_used=sandbox.last_used, now=time.monotonic(), cpu=cpu)
            if self.idle_cpu.over(used):
                log.warning(
                    "sandbox %s used %.1f s of CPU in %.0f s with no cell running: pausing it",
                    sandbox.id,
                    used,
                    self.idle_cpu.window,
                )
                self.idle_cpu.forget(sandbox.id)
                await self._try_pause(sandbox, why="cpu")

    async def _held(self, sandbox: ServerSandbox) -> bool:
        """Whether an idle pause waits (and ``pause_held`` says why): a user's thread runs, or
        its state cannot be saved whole. Looked at again now and then, never past the limit."""
        if sandbox.idle_seconds() >= self.hold_limit_seconds:
            return False
        if self._unsavable.get(sandbox.id) == sandbox.last_used:
            return True
        checked = self._checked.get(sandbox.id)
        fresh = checked is not None and time.monotonic() - checked < RECHECK_SECONDS
        if fresh and checked > sandbox.last_used:  # type: ignore[operator]
            return bool(sandbox.pause_held)
        self._checked[sandbox.id] = time.monotonic()
        threads = await self._user_threads(sandbox)
        sandbox.pause_held = f"a thread it started is still running ({', '.join(threads)})" if threads else ""
        return bool(threads)

    async def _user_threads(self, sandbox: ServerSandbox) -> list[str]:
        names: list[str] = []
        for context in list(sandbox.contexts.values()):
            try:
                out = await context.inspect(BACKGROUND_WORK_CELL, BACKGROUND_CHECK_TIMEOUT)
            except (ContextBusy, KernelDied, TimeoutError):
                return ["its kernel did not answer"]
            names += _report(out)
        return names

    def _expire_paused(self) -> None:
        for record in [r for r in self.paused.values() if r.is_expired() and r.id not in self._resuming]:
            log.info("paused sandbox %s expired; removing it", record.id)
            self.paused.pop(record.id, None)
            self.registry.remember_expired(record.id)
            asyncio.create_task(self._forget(record))


def _cpu_seconds(sandbox: ServerSandbox) -> float | None:
    """CPU seconds the processes of the sandbox's kernels used (None: one has no process now)."""
    total = 0.0
    for context in list(sandbox.contexts.values()):
        process = context.kernel.process
        used = tree_cpu_seconds(process.pid) if process is not None else None
        if used is None:
            return None
        total += used
    return total


def cpu_notice(meter: IdleCpuMeter, unsaved: list[str]) -> str:
    """What the first cell after a pause for idle CPU says."""
    kept = "Its variables and files were kept"
    if unsaved:
        kept += f", but for these, which could not be saved: {', '.join(unsaved)}"
    return (
        f"[sandbox] While no cell ran, processes or threads this sandbox had started used"
        f" {meter.budget:g} s of CPU within {meter.window:g} s, so they were stopped: the sandbox"
        f" was paused and has now resumed. {kept}. Background work must end with its cell.\n"
    )


def _report(out: str) -> list[str]:
    for line in out.splitlines():
        if line.startswith(background_work.REPORT_PREFIX):
            try:
                names = json.loads(line.removeprefix(background_work.REPORT_PREFIX))
            except ValueError:
                break
            if isinstance(names, list):
                return [str(name)[:100] for name in names[:20]]
    return ["its kernel did not answer"]
