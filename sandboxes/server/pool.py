"""A warm pool: sandboxes whose workdir exists and whose first kernel is already running."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sandboxes.kernels.kernel import Kernel, KernelSpec
from sandboxes.server import workdirs

log = logging.getLogger(__name__)


@dataclass
class Warm:
    sandbox_id: str
    workdir: Path
    kernel: Kernel


class WarmPool:
    """Keeps ``size`` ready kernels per template, refilling one at a time in the background."""

    def __init__(
        self,
        *,
        size: int,
        specs: dict[str, KernelSpec],
        new_workdir: Callable[[str], Path],
    ) -> None:
        self.size = size
        self.specs = specs
        self.new_workdir = new_workdir
        self.ready: dict[str, list[Warm]] = {name: [] for name in specs}
        self._wanted = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self.size > 0:
            self._task = asyncio.create_task(self._fill_forever())
            self._wanted.set()

    def take(self, template: str) -> Warm | None:
        units = self.ready.get(template)
        if not units:
            return None
        unit = units.pop(0)
        self._wanted.set()
        if not unit.kernel.is_alive():
            asyncio.create_task(self._discard(unit))
            return None
        return unit

    async def _fill_forever(self) -> None:
        while True:
            await self._wanted.wait()
            self._wanted.clear()
            for name, spec in self.specs.items():
                while len(self.ready[name]) < self.size:
                    try:
                        self.ready[name].append(await self._warm(spec))
                    except Exception:
                        log.exception("could not start a pooled %s kernel", name)
                        await asyncio.sleep(5)
                        break

    async def _warm(self, spec: KernelSpec) -> Warm:
        sandbox_id = uuid.uuid4().hex
        creating = asyncio.ensure_future(asyncio.to_thread(self.new_workdir, sandbox_id))
        try:
            workdir = await asyncio.shield(creating)
        except asyncio.CancelledError:  # the thread goes on: wait for it, then undo its work
            await asyncio.to_thread(workdirs.destroy, await creating)
            raise
        kernel = Kernel(spec, workdir)
        try:
            await kernel.start()
        except BaseException:
            await asyncio.to_thread(workdirs.destroy, workdir)
            raise
        return Warm(sandbox_id, workdir, kernel)

    async def _discard(self, unit: Warm) -> None:
        await unit.kernel.shutdown()
        await asyncio.to_thread(workdirs.destroy, unit.workdir)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        units = [u for units in self.ready.values() for u in units]
        self.ready = {name: [] for name in self.specs}
        await asyncio.gather(*(self._discard(u) for u in units), return_exceptions=True)
