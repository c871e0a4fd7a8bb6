"""A warm pool: sandboxes whose workdir exists and whose first kernel is already running, with the
template's warm-up imports done. It grows while it is drained and shrinks when idle (pool_sizing)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sandboxes.errors import CapacityExceeded
from sandboxes.kernels.kernel import Kernel, KernelSpec, in_own_namespace
from sandboxes.server import workdirs
from sandboxes.server.pool_sizing import PoolSizing, memory_available
from sandboxes.server.system_limits import check_room_for_a_kernel

log = logging.getLogger(__name__)
WARM_UP_TIMEOUT = 120.0
# A taken sandbox's first cells go first: a refill (a kernel start and the warm-up imports,
# ~1.3 s of CPU) started at once would compete with them on a small machine.
REFILL_DELAY = 1.0
# Past its size the pool grows only while the host keeps this much memory available.
GROWTH_MEMORY_RESERVE = 2 << 30


@dataclass
class Warm:
    sandbox_id: str
    workdir: Path
    kernel: Kernel


class WarmPool:
    """Keeps at least ``size`` ready kernels per template and up to ``max_size`` while sandboxes
    are taken faster than one kernel warms up, refilling in the background; back to ``size``
    after ``idle_seconds`` without a take."""

    def __init__(
        self,
        *,
        size: int,
        specs: dict[str, KernelSpec],
        max_size: int | None = None,
        idle_seconds: float = 120.0,
        new_workdir: Callable[[str], Path],
        own: Callable[[KernelSpec, str], KernelSpec] = lambda spec, _: spec,
        drop_workdir: Callable[[str, Path], None] = lambda _, path: workdirs.destroy(path),
        warm_up: bool = True,
    ) -> None:
        self.size = size
        self.specs = specs
        # Each template's warm-up cell, read once (empty when turned off or the template has none).
        self.warm_ups = {name: spec.template.warm_up_code if warm_up else "" for name, spec in specs.items()}
        # A pooled sandbox holds its workdir (and host uid) from new_workdir to drop_workdir;
        # own gives the spec its kernels run with.
        self.new_workdir = new_workdir
        self.own = own
        self.drop_workdir = drop_workdir
        self.ready: dict[str, list[Warm]] = {name: [] for name in specs}
        self.max_size = size if max_size is None else max(size, max_size)
        self.sizing = {
            name: PoolSizing(minimum=size, maximum=self.max_size, idle_seconds=idle_seconds) for name in specs
        }
        self._wanted = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self.size > 0:
            self._task = asyncio.create_task(self._fill_forever())
            self._wanted.set()

    def target(self, template: str) -> int:
        return self.sizing[template].target() if self.size > 0 else 0

    def take(self, template: str) -> Warm | None:
        units = self.ready.get(template)
        if template in self.sizing and self.size > 0:
            self.sizing[template].took(found=bool(units))
        if not units:
            self._wanted.set()  # a miss: the pool grows
            return None
        unit = units.pop(0)
        if not unit.kernel.is_alive():
            self._wanted.set()
            asyncio.create_task(self._discard(unit))
            return None
        asyncio.get_running_loop().call_later(REFILL_DELAY, self._wanted.set)
        return unit

    async def _fill_forever(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):  # woken by a take, or now and then to shrink
                await asyncio.wait_for(self._wanted.wait(), timeout=self._shrink_check_seconds())
            self._wanted.clear()
            for name, spec in self.specs.items():
                await self._shrink(name)
                await self._fill(name, spec)

    def _shrink_check_seconds(self) -> float:
        return max(1.0, min(s.idle_seconds for s in self.sizing.values()) / 4) if self.sizing else 60.0

    async def _fill(self, name: str, spec: KernelSpec) -> None:
        sizing = self.sizing[name]
        while (missing := sizing.target() - len(self.ready[name])) > 0:
            if len(self.ready[name]) >= self.size and memory_available() < GROWTH_MEMORY_RESERVE:
                log.info("the %s pool stays at %d: the host is short of memory", name, len(self.ready[name]))
                return
            started = time.monotonic()
            batch = min(missing, sizing.parallel())
            warmed = await asyncio.gather(*(self._warm(spec) for _ in range(batch)), return_exceptions=True)
            units = [unit for unit in warmed if isinstance(unit, Warm)]
            self.ready[name].extend(units)
            if units:
                sizing.warmed((time.monotonic() - started) / len(units))
            failure = next((e for e in warmed if isinstance(e, BaseException)), None)
            if isinstance(failure, CapacityExceeded):
                log.warning("the pool of %s kernels waits: %s", name, failure)
            elif failure is not None:
                log.error("could not start a pooled %s kernel", name, exc_info=failure)
            if failure is not None:
                await asyncio.sleep(5)
                return

    async def _shrink(self, name: str) -> None:
        """An idle pool gives back one kernel above its target at a time."""
        units = self.ready[name]
        if len(units) > self.sizing[name].target():
            await self._discard(units.pop())

    async def _warm(self, spec: KernelSpec) -> Warm:
        check_room_for_a_kernel()
        sandbox_id = uuid.uuid4().hex
        creating = asyncio.ensure_future(asyncio.to_thread(self.new_workdir, sandbox_id))
        try:
            workdir = await asyncio.shield(creating)
        except asyncio.CancelledError:  # the thread goes on: wait for it, then undo its work
            await asyncio.to_thread(self.drop_workdir, sandbox_id, await creating)
            raise
        kernel = Kernel(self.own(spec, sandbox_id), workdir)
        try:
            await kernel.start()
        except BaseException:
            await asyncio.to_thread(self.drop_workdir, sandbox_id, workdir)
            raise
        unit = Warm(sandbox_id, workdir, kernel)
        try:
            await _warm_up(kernel, self.warm_ups[spec.template.name])
        except BaseException:
            await self._discard(unit)
            raise
        return unit

    async def _discard(self, unit: Warm) -> None:
        await unit.kernel.shutdown()
        await asyncio.to_thread(self.drop_workdir, unit.sandbox_id, unit.workdir)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        units = [u for units in self.ready.values() for u in units]
        self.ready = {name: [] for name in self.specs}
        await asyncio.gather(*(self._discard(u) for u in units), return_exceptions=True)


async def _warm_up(kernel: Kernel, code: str) -> None:
    """Run the template's warm-up in a namespace of its own (the user's gains no names). What it
    could not import is logged; a kernel that dies or hangs on it is not pooled."""
    if not code:
        return
    cell = in_own_namespace(code, "__sandbox_warm_up__")
    async for event in kernel.execute(cell, WARM_UP_TIMEOUT, silent=True):
        if event["type"] == "error":
            log.warning("a pooled kernel's warm-up failed: %s", event.get("traceback") or event)
