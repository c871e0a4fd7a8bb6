"""A code context: one kernel whose state persists across cells, with timeouts, caps and restarts."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Protocol

import anyio

from sandboxes.errors import ContextBusy, SandboxError
from sandboxes.kernels.kernel import Kernel, KernelDied, KernelSpec, KernelUnanswered, error_for
from sandboxes.kernels.messages import Event, error_event
from sandboxes.server.system_limits import check_room_for_a_kernel

BUSY_GRACE_SECONDS = 1.0
REINTERRUPT_SECONDS = 1.0  # an interrupt still running after this is sent again (see interrupt)
RESTART_WAIT_SECONDS = 60.0  # a killed kernel's cell ends, and a new kernel starts, well within this
SILENT_OUTPUT_LIMIT = 1 << 20  # what we keep of our own cell's stdout: its last MiB
RESULTS_LIMIT = 16 << 20  # a cell's results and errors, by default (SANDBOXD_RESULTS_LIMIT)
ERROR_TEXT_LIMIT = 64 << 10  # an error's value, and its traceback, at most (or the stdout cap if less)
RESTARTED = "variables and imports are gone, files in the workdir are kept"
ABANDONED_RESTART = (
    "[sandbox] the previous cell, whose caller left, did not stop when interrupted, so the"
    f" kernel was restarted: {RESTARTED}.\n"
)


class DeferredVariables(Protocol):
    """What a context needs of the large variables a restore has not loaded yet
    (snapshots/deferred.py, which loads them through the context)."""

    def needed_by(self, code: str) -> bool:
        """Whether ``code`` may use a variable not loaded yet."""

    async def load_all(self) -> None:
        """Load every one now. Raises SnapshotFailed for those that cannot be."""

    def take_lost(self) -> list[str]:
        """Why some could not be loaded since this was last asked."""

    def discard(self) -> None:
        """The context is closing or restarting: load nothing more."""


class CodeContext:
    def __init__(self, spec: KernelSpec, workdir: Path, kernel: Kernel | None = None) -> None:
        self.id = uuid.uuid4().hex
        self.spec = spec
        self.workdir = workdir
        self.kernel = kernel or Kernel(spec, workdir)
        self._lock = asyncio.Lock()
        self._winding_down = False  # an abandoned cell is being interrupted
        self._ours = False  # sandboxd's own short cell runs (inspector, deferred load): cells wait
        self.deferred: DeferredVariables | None = None  # large variables a restore has not loaded yet
        self.history = History()
        self._cell_done: asyncio.Event | None = None  # set when the user's running cell has ended
        self._stopping = False  # Stop or Restart is ending a cell that ignored its interrupt
        self._untold = ""  # what the next cell says first: the kernel was restarted after it
        self.on_new_kernel: Callable[[], Awaitable[None]] | None = None  # its sandbox's egress follows

    async def start(self) -> None:
        check_room_for_a_kernel()
        await self.kernel.start()

    @property
    def busy(self) -> bool:
        return self._lock.locked()

    def info(self) -> dict[str, object]:
        return {
            "id": self.id,
            "language": "python",
            "cwd": "/home/user",
            "busy": self.busy,
            "memory": self.kernel.memory(),
        }

    async def run(
        self, code: str, *, timeout: float, stdout_limit: int, results_limit: int = RESULTS_LIMIT
    ) -> AsyncIterator[Event]:
        """Execute ``code``; yield its events, ending with ``end_of_execution``.

        A cell that outlives ``timeout`` is interrupted; if it will not stop, the kernel is
        restarted. A kernel that dies is restarted. Either way the events say so plainly.
        A cell whose caller left is being stopped, not run: the next one waits for it.
        """
        unloaded = await self._load_what_it_may_use(code)
        await self._refuse_if_busy()
        async with self._lock:
            self._cell_done = asyncio.Event()
            # aclosing: a caller gone mid-cell closes this generator, and the held one must wind
            # its cell down now, under the lock, not whenever it is collected.
            held = self._run_held(code, timeout, stdout_limit, results_limit, unloaded)
            try:
                async with contextlib.aclosing(held):
                    async for event in held:
                        yield event
            finally:
                self._cell_done.set()
                self._cell_done = None
                self._stopping = False

    async def _run_held(
        self, code: str, timeout: float, stdout_limit: int, results_limit: int, unloaded: str
    ) -> AsyncIterator[Event]:
        if self._untold:
            yield {"type": "stderr", "text": self._untold}
            self._untold = ""
        if unloaded:
            yield {"type": "stderr", "text": f"[sandbox] {unloaded}\n"}
        self.history.add(code)
        capped = OutputCap(stdout_limit, results_limit)
        finished = False
        try:
            cell = self._execute_on_an_answering_kernel(code, timeout, capped)
            async with contextlib.aclosing(cell):
                async for event in cell:
                    finished = event["type"] == "end_of_execution"
                    yield event
        except TimeoutError:
            finished = True
            async for event in self._after_timeout(timeout):
                yield event
        except KernelDied as exc:
            finished = True
            await self._restart_kernel()
            yield self._stopped_error() if self._stopping else error_for(exc)
            yield {"type": "end_of_execution", "execution_count": None}
        finally:
            if not finished and self.kernel.is_alive():  # the caller went away mid-cell
                # Shielded: a caller gone cancels this task, and the cancellation would end the
                # wind-down at its first wait, leaving the cell running under the next one.
                with anyio.CancelScope(shield=True):
                    await self._wind_down()

    async def _wind_down(self) -> None:
        """Stop a cell whose caller left; one that will not stop costs its kernel, and the next
        cell says so."""
        self._winding_down = True
        try:
            if not (await self.kernel.interrupt() and await self.kernel.wait_idle()):
                await self._restart_kernel()  # else the next cell would queue behind it
                self._untold = ABANDONED_RESTART
        finally:
            self._winding_down = False

    async def _execute_on_an_answering_kernel(
        self, code: str, timeout: float, capped: OutputCap
    ) -> AsyncIterator[Event]:
        """The cell's capped events. A kernel that stopped answering (a cell closed its sockets:
        no cell would reach it again) is restarted, saying so; a cell it never took runs on the
        new kernel, once."""
        for attempt in (1, 2):
            try:
                async for event in self.kernel.execute(code, timeout):
                    for out in capped.filter(event):
                        yield out
                return
            except KernelUnanswered as exc:
                await self._restart_kernel()
                yield {"type": "stderr", "text": unanswered_notice(exc)}
                if exc.started or attempt == 2:
                    yield {"type": "end_of_execution", "execution_count": None}
                    return

    def _stopped_error(self) -> Event:
        grace = self.spec.interrupt_grace
        return error_event(
            "KernelRestarted",
            f"The cell was stopped: it did not end within {grace:g} s of its interrupt, so the"
            f" kernel was restarted: {RESTARTED}.",
            [],
        )

    async def _load_what_it_may_use(self, code: str) -> str:
        """Load deferred variables ``code`` may use; what could not be loaded, now or in the
        background since the last cell, said, or ""."""
        if self.deferred is None:
            return ""
        if self.deferred.needed_by(code):
            with contextlib.suppress(SandboxError):  # what failed is in take_lost()
                await self.deferred.load_all()
        lost = self.deferred.take_lost()
        return f"{'; '.join(lost)}; they are gone." if lost else ""

    async def complete_state(self) -> None:
        """Load every deferred variable (before the whole namespace is read or saved)."""
        if self.deferred is not None:
            await self.deferred.load_all()

    @contextlib.asynccontextmanager
    async def between_cells(self) -> AsyncIterator[None]:
        """Hold the context for sandboxd's own short cell once the running one ends; a cell
        asked for meanwhile waits for it instead of being refused."""
        async with self._lock:
            self._ours = True
            try:
                yield
            finally:
                self._ours = False

    @contextlib.asynccontextmanager
    async def exclusive(self) -> AsyncIterator[None]:
        """Hold the context between cells (for a snapshot); ContextBusy while a cell runs."""
        await self._refuse_if_busy()
        async with self._lock:
            yield

    async def run_silent(self, code: str, timeout: float) -> str:
        """sandboxd's own cell, run while holding ``exclusive()``: its stdout, or KernelDied.
        A kernel that died or would not finish is restarted."""
        tail = Tail(SILENT_OUTPUT_LIMIT)
        try:
            async for event in self.kernel.execute(code, timeout, silent=True):
                if event["type"] == "stdout":
                    tail.add(event["text"])
        except (KernelDied, TimeoutError):
            await self._restart_kernel()
            raise KernelDied("the kernel died or hung while its state was saved or loaded") from None
        return tail.text()

    async def inspect(self, code: str, timeout: float) -> str:
        """sandboxd's own silent cell that only reads the state (the variable inspector): its
        stdout. Between cells only: ContextBusy while one runs. A cell or snapshot asked for
        meanwhile waits for it instead of being refused. One that outlives ``timeout`` is
        interrupted (the kernel restarted only if it will not stop) and raises TimeoutError; a
        kernel that died is restarted and raises KernelDied."""
        await self._refuse_if_busy()
        async with self._lock:
            self._ours = True
            tail = Tail(SILENT_OUTPUT_LIMIT)
            try:
                async for event in self.kernel.execute(code, timeout, silent=True):
                    if event["type"] == "stdout":
                        tail.add(event["text"])
            except TimeoutError:
                if not (await self.kernel.interrupt() and await self.kernel.wait_idle()):
                    await self._restart_kernel()
                raise
            except KernelDied:
                await self._restart_kernel()
                raise
            finally:
                self._ours = False
            return tail.text()

    async def _refuse_if_busy(self) -> None:
        """ContextBusy while another cell runs. A caller that just dropped its cell may send the
        next one before we notice it left, so a busy context gets a moment to start winding
        down; one held by the inspector is waited for."""
        deadline = time.monotonic() + BUSY_GRACE_SECONDS
        while self.busy and not (self._winding_down or self._ours):
            if time.monotonic() > deadline:
                raise ContextBusy("this code context is already running a cell")
            await asyncio.sleep(0.02)

    async def _after_timeout(self, timeout: float) -> AsyncIterator[Event]:
        if await self.kernel.interrupt() and await self.kernel.wait_idle():
            message = f"The cell ran longer than {timeout:g} s and was interrupted. State is kept."
        else:
            await self._restart_kernel()
            message = (
                f"The cell ran longer than {timeout:g} s and would not stop, so the kernel was"
                f" restarted: {RESTARTED}."
            )
        yield error_event("TimeoutError", message, [])
        yield {"type": "end_of_execution", "execution_count": None}

    async def interrupt(self) -> bool:
        """Interrupt the user's running cell; one still running ``interrupt_grace`` seconds later
        (it ignores SIGINT, or sits in C code) is ended by killing its kernel, which the cell's
        own run restarts, saying so in its events. True if the cell ended (or none ran)."""
        done = self._cell_done
        if done is None:  # no cell of the user's: nothing to escalate
            return await self.kernel.interrupt()
        # Sent again every REINTERRUPT_SECONDS within the grace: ipykernel ignores SIGINT until its
        # cell starts executing, so one that lands between the request and the cell is lost.
        deadline = asyncio.get_running_loop().time() + self.spec.interrupt_grace
        while (left := deadline - asyncio.get_running_loop().time()) > 0 and not self._stopping:
            await self.kernel.interrupt()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), min(REINTERRUPT_SECONDS, left))
                return True
        await self._end_cell(done)
        return done.is_set()

    async def restart(self) -> None:
        """A kernel with empty state (files are kept). A running cell is ended first: its kernel
        is killed and the cell's own run restarts it, saying so in its events."""
        done = self._cell_done
        if done is not None:
            await self._end_cell(done)
            if done.is_set():
                return  # the cell's run restarted the kernel
        async with self._lock:
            await self._restart_kernel()

    async def _end_cell(self, done: asyncio.Event) -> None:
        """Kill the kernel under the running cell and wait (bounded) for its run to restart it.
        A second Stop meanwhile only waits: a kill now would be of the kernel restarting."""
        if not self._stopping:
            self._stopping = True
            process = self.kernel.process
            if process is not None:
                await asyncio.to_thread(process.kill)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), RESTART_WAIT_SECONDS)

    async def _restart_kernel(self) -> None:
        self._discard_deferred()
        await self.kernel.shutdown()
        self.kernel = Kernel(self.spec, self.workdir)
        await self.kernel.start()
        if self.on_new_kernel is not None:
            await self.on_new_kernel()

    async def close(self) -> None:
        self._discard_deferred()
        await self.kernel.shutdown()

    def _discard_deferred(self) -> None:
        if self.deferred is not None:
            self.deferred.discard()
            self.deferred = None


def unanswered_notice(exc: KernelUnanswered) -> str:
    """What a cell says when its kernel stopped answering and was restarted."""
    where = "it ran no further" if exc.started else "this cell ran on the new kernel"
    return (
        f"[sandbox] the kernel stopped answering ({exc.reason}; did a cell close its sockets?),"
        f" so it was restarted: {RESTARTED}; {where}.\n"
    )


class History:
    """The cells a context ran, in order, for a restore that replays them; bounded in size."""

    LIMIT_CHARS = 4_000_000

    def __init__(self, cells: list[str] | None = None, complete: bool = True) -> None:
        self.cells = list(cells or [])
        self.complete = complete
        self.chars = sum(len(cell) for cell in self.cells)

    def add(self, code: str) -> None:
        if self.chars + len(code) > self.LIMIT_CHARS:
            self.complete = False  # a replay of part of it would not rebuild the state
            return
        self.cells.append(code)
        self.chars += len(code)


class Tail:
    """The last ``limit`` characters of a stream of text, held in bounded memory."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.chars = 0

    def add(self, text: str) -> None:
        self.parts.append(text[-self.limit :])
        self.chars += len(self.parts[-1])
        if self.chars > 2 * self.limit:
            self.parts = [self.text()]
            self.chars = len(self.parts[0])

    def text(self) -> str:
        return "".join(self.parts)[-self.limit :]


class OutputCap:
    """What one cell may send: stdout/stderr until ``limit`` bytes, results and errors until
    ``results_limit`` bytes (an error's value and traceback each cut to ``limit``, at most
    ERROR_TEXT_LIMIT), each then one visible marker and nothing more of its kind; at the cell's
    end, a line on stderr says how many results and errors were dropped, and their bytes."""

    def __init__(self, limit: int, results_limit: int = RESULTS_LIMIT) -> None:
        self.limit = limit
        self.used = 0
        self.truncated = False
        self.results_limit = results_limit
        self.results_used = 0
        self.results_truncated = False
        self.dropped = 0  # results and errors left out
        self.dropped_bytes = 0

    def filter(self, event: Event) -> list[Event]:
        if event["type"] in ("result", "error"):
            return self._result(event)
        if event["type"] == "end_of_execution" and self.dropped:
            notice = (
                f"[sandbox] {self.dropped} results and errors of this cell"
                f" ({self.dropped_bytes} bytes) were dropped over its limit of {self.results_limit} bytes\n"
            )
            return [{"type": "stderr", "text": notice}, event]
        if event["type"] not in ("stdout", "stderr"):
            return [event]
        if self.truncated:
            return []
        data = event["text"].encode(errors="surrogatepass")
        if self.used + len(data) <= self.limit:
            self.used += len(data)
            return [event]
        self.truncated = True
        head = data[: self.limit - self.used].decode(errors="ignore")
        marker = f"\n[output truncated: more than {self.limit} bytes of output in this cell]\n"
        return [{**event, "text": head}, {"type": "stderr", "text": marker}]

    def _result(self, event: Event) -> list[Event]:
        if event["type"] == "error":
            event = {**event, "value": self._cut(event["value"]), "traceback": self._cut(event["traceback"])}
        size = len(json.dumps(event))
        if not self.results_truncated and self.results_used + size <= self.results_limit:
            self.results_used += size
            return [event]
        self.dropped += 1
        self.dropped_bytes += size
        if self.results_truncated:
            return []
        self.results_truncated = True
        text = f"[results truncated: more than {self.results_limit} bytes of results and errors in this cell]"
        return [{"type": "result", "data": {"text/plain": text}, "is_main_result": False}]

    def _cut(self, text: str) -> str:
        limit = min(self.limit, ERROR_TEXT_LIMIT)
        if len(text) <= limit:
            return text
        return text[:limit] + f"\n[truncated: more than {limit} characters]"
