"""A kernel started ahead for a sandbox's next new code context.

Even forked from its template's zygote, a new context's kernel takes a few hundred milliseconds
to its first answer: ipykernel's own start and the template's startup file run in it
(benchmarks/contexts.py). A sandbox that made one context is likely to make another (the app
makes one for each upload it describes), so after each it starts the next in the background, and
a new context takes that one in a few milliseconds. One left unused for ``keep_seconds`` is
stopped (so is it with its sandbox): it holds a kernel's memory meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

from sandboxes.errors import SandboxError
from sandboxes.kernels.kernel import Kernel, KernelDied, KernelSpec, KernelStartFailed
from sandboxes.server.system_limits import check_room_for_a_kernel

log = logging.getLogger(__name__)


class SpareKernel:
    def __init__(self, spec: KernelSpec, workdir: Path, keep_seconds: float) -> None:
        self.spec = spec
        self.workdir = workdir
        self.keep_seconds = keep_seconds
        self._starting: asyncio.Task[Kernel] | None = None
        self._readied_at = 0.0

    def ready(self) -> None:
        """Start one in the background, unless one is ready or on its way (or none is kept)."""
        if self.keep_seconds > 0 and self._starting is None:
            self._starting = asyncio.create_task(self._start())
            self._readied_at = time.monotonic()

    async def _start(self) -> Kernel:
        check_room_for_a_kernel()
        kernel = Kernel(self.spec, self.workdir)
        await kernel.start()
        return kernel

    async def take(self) -> Kernel | None:
        """The kernel started ahead (waiting for it if it is still starting), or None when there
        is none, or it did not start or has died since."""
        starting, self._starting = self._starting, None
        kernel = await _started(starting)
        if kernel is None or kernel.is_alive():
            return kernel
        await kernel.shutdown()
        return None

    async def drop_if_unused(self) -> None:
        if self._starting is not None and time.monotonic() - self._readied_at > self.keep_seconds:
            await self.drop()

    async def close(self) -> None:
        """Stop it, and start no other (the sandbox is going)."""
        self.keep_seconds = 0
        await self.drop()

    async def drop(self) -> None:
        """Stop it. One still starting is let finish first: cancelled, its process might be
        launched all the same, by then out of our hands."""
        starting, self._starting = self._starting, None
        kernel = await _started(starting)
        if kernel is not None:
            await kernel.shutdown()


async def _started(starting: asyncio.Task[Kernel] | None) -> Kernel | None:
    if starting is None:
        return None
    try:
        return await starting
    except (SandboxError, KernelStartFailed, KernelDied, OSError) as exc:  # no room, or it did not come up
        log.info("a kernel started ahead for a new code context did not start: %s", exc)
        return None
