"""A sandbox on the server: a workdir, its code contexts and its time to live."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from pathlib import Path

from sandboxes.errors import ContextNotFound
from sandboxes.kernels.kernel import Kernel, KernelSpec
from sandboxes.server import workdirs
from sandboxes.server.contexts import CodeContext
from sandboxes.server.egress.sandbox_egress import SandboxEgress
from sandboxes.server.spare_kernel import SpareKernel


class ServerSandbox:
    def __init__(
        self,
        sandbox_id: str,
        *,
        template: str,
        spec: KernelSpec,
        workdir: Path,
        ttl_seconds: int,
        metadata: Mapping[str, str],
        spare_seconds: float = 0.0,
    ) -> None:
        self.id = sandbox_id
        self.template = template
        self.spec = spec
        self.workdir = workdir
        self.ttl_seconds = ttl_seconds
        self.metadata = dict(metadata)
        self.created_at = time.time()
        self.last_used = time.monotonic()
        self.contexts: dict[str, CodeContext] = {}
        self.default_context_id = ""
        self.idempotency_key = ""  # set by Registry.create_once
        self.users = 0  # requests being served with it (the pauser waits for none)
        self.pause_held = ""  # why an idle pause waits, said in its info
        self.resumed: dict[str, object] | None = None  # what its last resume brought back
        self.spare = SpareKernel(spec, workdir, spare_seconds)  # for its next new code context
        self.egress: SandboxEgress | None = None  # set by its first PUT .../egress

    def add_context(self, context: CodeContext, *, default: bool = False) -> None:
        self.contexts[context.id] = context
        context.on_new_kernel = self.kernels_changed
        if default or not self.default_context_id:
            self.default_context_id = context.id

    async def new_context(self) -> CodeContext:
        context = CodeContext(self.spec, self.workdir)
        await context.start()
        self.add_context(context)
        await self.kernels_changed()
        return context

    async def another_context(self) -> CodeContext:
        """A new code context asked for by a user of the sandbox: on the kernel started ahead for
        it when there is one, and then the next one is started ahead (spare_kernel.py)."""
        kernel = await self.spare.take()
        if kernel is None:
            context = await self.new_context()
        else:
            context = CodeContext(self.spec, self.workdir, kernel=kernel)
            self.add_context(context)
            await self.kernels_changed()
        self.spare.ready()
        return context

    def rename_context(self, context_id: str, new_id: str) -> None:
        """Give a context the id it had in the sandbox this one was restored from."""
        context = self.contexts.pop(context_id)
        context.id = new_id
        self.contexts[new_id] = context
        if self.default_context_id == context_id:
            self.default_context_id = new_id

    def context(self, context_id: str) -> CodeContext:
        if context_id == "default":
            context_id = self.default_context_id
        try:
            return self.contexts[context_id]
        except KeyError:
            raise ContextNotFound(f"no code context {context_id!r} in sandbox {self.id}") from None

    async def close_context(self, context_id: str) -> None:
        context = self.context(context_id)
        del self.contexts[context.id]
        if context.id == self.default_context_id:
            self.default_context_id = next(iter(self.contexts), "")
        await context.close()
        await self.kernels_changed()

    def kernels(self) -> list[Kernel]:
        return [context.kernel for context in self.contexts.values()]

    async def kernels_changed(self) -> None:
        """A kernel started, restarted or closed: the sandbox's egress follows its kernels."""
        if self.egress is not None:
            await self.egress.follow(self.kernels())

    @property
    def owner(self) -> tuple[int, int] | None:
        """The host (uid, gid) its kernels run as and its files belong to, or None: ours."""
        return self.spec.owner

    def touch(self) -> None:
        self.last_used = time.monotonic()

    def set_ttl(self, seconds: int) -> None:
        self.ttl_seconds = seconds
        self.touch()

    def seconds_left(self) -> float:
        return self.ttl_seconds - (time.monotonic() - self.last_used)

    @property
    def busy(self) -> bool:
        return any(context.busy for context in self.contexts.values())

    def idle_seconds(self) -> float:
        return 0.0 if self.busy or self.users else time.monotonic() - self.last_used

    def is_expired(self) -> bool:
        return not self.busy and self.seconds_left() <= 0

    async def kill(self) -> None:
        contexts, self.contexts = list(self.contexts.values()), {}
        closing = [c.close() for c in contexts]
        if self.egress is not None:
            closing.append(self.egress.close())
        await asyncio.gather(self.spare.close(), *closing, return_exceptions=True)
        await asyncio.to_thread(workdirs.destroy, self.workdir)

    def info(self) -> dict[str, object]:
        return {
            "id": self.id,
            "state": "running",
            "template": self.template,
            "metadata": self.metadata,
            "created_at": self.created_at,
            "ttl_seconds": self.ttl_seconds,
            "expires_in": max(0.0, round(self.seconds_left(), 3)),
            "default_context_id": self.default_context_id,
            "contexts": [c.info() for c in self.contexts.values()],
            "pause_held": self.pause_held or None,
            "resumed": self.resumed,
        }
