"""Every live sandbox of this service, creation (pooled or cold), lookup, and the TTL reaper."""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

from sandboxes.errors import (
    CapacityExceeded,
    InvalidRequest,
    SandboxExpired,
    SandboxNotFound,
    TemplateNotFound,
)
from sandboxes.kernels.kernel import KernelSpec
from sandboxes.server import workdirs
from sandboxes.server.config import ServerConfig
from sandboxes.server.contexts import CodeContext
from sandboxes.server.paused_records import PausedSandbox
from sandboxes.server.pool import WarmPool
from sandboxes.server.sandbox import ServerSandbox
from sandboxes.server.uids import UidRange

log = logging.getLogger(__name__)
EXPIRED_MEMORY = 10_000


class Registry:
    def __init__(self, config: ServerConfig, specs: dict[str, KernelSpec]) -> None:
        self.config = config
        self.specs = specs
        self.sandboxes: dict[str, ServerSandbox] = {}
        # Each sandbox's own host uid (pooled ones included), where sandboxd is root.
        self.uids = UidRange(config.owner[0], config.uid_count) if config.owner else None
        self.cgroups: dict[str, object] = {}  # what cgroups enforce here (set by serve)
        self.expired: collections.OrderedDict[str, None] = collections.OrderedDict()
        self.pool = WarmPool(
            size=config.pool_size,
            max_size=config.pool_max_size,
            idle_seconds=config.pool_idle_seconds,
            specs=self._pooled_specs(),
            new_workdir=self.new_workdir,
            own=self.own,
            drop_workdir=self.drop_workdir,
            warm_up=config.pool_warm_up,
        )
        self._reaper: asyncio.Task[None] | None = None
        # Idempotency key → the live sandbox it made, and the creations under way per key.
        self._by_key: dict[str, str] = {}
        self._creating: dict[str, asyncio.Task[ServerSandbox]] = {}
        # Paused sandboxes, and the pauser's two hooks (set by it): make room for one more live
        # sandbox (pausing idle ones), and bring a paused one back.
        self.paused: dict[str, PausedSandbox] = {}
        self.make_room: Callable[[], Awaitable[None]] | None = None
        self.resume: Callable[[str], Awaitable[ServerSandbox]] | None = None

    def _pooled_specs(self) -> dict[str, KernelSpec]:
        return {name: spec for name, spec in self.specs.items() if name in self.config.pool_templates}

    def start(self) -> None:
        root = self.config.data_dir / "sandboxes"
        root.mkdir(parents=True, exist_ok=True)
        for stale in root.iterdir():  # left by a sandboxd that was killed; its kernels died with it
            log.info("removing stale workdir %s", stale)
            workdirs.destroy(stale)
        self.pool.start()
        self._reaper = asyncio.create_task(self._reap_forever())

    def new_workdir(self, sandbox_id: str) -> Path:
        """The sandbox's workdir, owned by the uid it now holds (given back by drop_workdir)."""
        owner = self.uids.take(sandbox_id) if self.uids else None
        path = self.config.data_dir / "sandboxes" / sandbox_id
        try:
            workdirs.create(path, self.config.limits.disk_bytes, owner)
        except BaseException:
            self.release(sandbox_id)
            raise
        return path

    def own(self, spec: KernelSpec, sandbox_id: str) -> KernelSpec:
        """``spec`` for the kernels of ``sandbox_id``: they run as its uid."""
        if self.uids is None:
            return spec
        return dataclasses.replace(spec, owner=self.uids.take(sandbox_id))

    def drop_workdir(self, sandbox_id: str, path: Path) -> None:
        try:
            workdirs.destroy(path)
        finally:
            self.release(sandbox_id)

    def release(self, sandbox_id: str) -> None:
        """Give the sandbox's uid back, once its processes are gone (its kernels were closed)."""
        if self.uids is not None:
            self.uids.give_back(sandbox_id)

    def check_ttl(self, ttl_seconds: object) -> int:
        if ttl_seconds is None:
            return self.config.default_ttl_seconds
        if not isinstance(ttl_seconds, int) or isinstance(ttl_seconds, bool) or ttl_seconds <= 0:
            raise InvalidRequest("ttl_seconds must be a positive integer")
        if ttl_seconds > self.config.max_ttl_seconds:
            raise InvalidRequest(f"ttl_seconds may be at most {self.config.max_ttl_seconds}")
        return ttl_seconds

    async def create_once(
        self, key: str | None, *, template: str, ttl_seconds: int, metadata: Mapping[str, str]
    ) -> tuple[ServerSandbox, bool]:
        """The live sandbox an earlier create with ``key`` made (and False: adopted), or a new one
        (and True). A create with the same key while the first is still starting waits for it.
        The key is forgotten when its sandbox is killed or expires. No key: always a new one."""
        if key is None:
            return await self.create(template=template, ttl_seconds=ttl_seconds, metadata=metadata), True
        existing = self.sandboxes.get(self._by_key.get(key, ""))
        if existing is not None and not existing.is_expired():
            existing.touch()
            return existing, False
        if self._by_key.get(key, "") in self.paused and self.resume is not None:
            return await self.resume(self._by_key[key]), False
        pending = self._creating.get(key)
        if pending is not None:
            sandbox = await asyncio.shield(pending)
            sandbox.touch()
            return sandbox, False
        task = asyncio.create_task(self._create_keyed(key, template, ttl_seconds, metadata))
        self._creating[key] = task
        # Shielded: a caller that leaves mid-create must not undo the sandbox its retry adopts.
        return await asyncio.shield(task), True

    async def _create_keyed(
        self, key: str, template: str, ttl_seconds: int, metadata: Mapping[str, str]
    ) -> ServerSandbox:
        try:
            sandbox = await self.create(template=template, ttl_seconds=ttl_seconds, metadata=metadata)
            sandbox.idempotency_key = key
            self._by_key[key] = sandbox.id
            return sandbox
        finally:
            self._creating.pop(key, None)

    async def create(
        self, *, template: str, ttl_seconds: int, metadata: Mapping[str, str], sandbox_id: str | None = None
    ) -> ServerSandbox:
        """A new live sandbox (``sandbox_id``: one resumed under its old id). Raises
        TemplateNotFound, or CapacityExceeded when no room can be made for it."""
        spec = self.specs.get(template)
        if spec is None:
            raise TemplateNotFound(f"no template {template!r}; available: {', '.join(sorted(self.specs))}")
        if self.make_room is not None:
            await self.make_room()
        elif len(self.sandboxes) >= self.config.max_sandboxes:
            raise CapacityExceeded(f"this service runs at most {self.config.max_sandboxes} sandboxes")
        warm = self.pool.take(template)
        if warm is not None:
            workdir = warm.workdir
            if sandbox_id is None:
                sandbox_id = warm.sandbox_id
            elif self.uids is not None:
                self.uids.rename(warm.sandbox_id, sandbox_id)
        else:
            sandbox_id = sandbox_id or uuid.uuid4().hex
            workdir = await asyncio.to_thread(self.new_workdir, sandbox_id)
        sandbox = ServerSandbox(
            sandbox_id,
            template=template,
            spec=self.own(spec, sandbox_id),
            workdir=workdir,
            ttl_seconds=ttl_seconds,
            metadata=metadata,
            spare_seconds=self.config.context_spare_seconds,
        )
        self.sandboxes[sandbox_id] = sandbox
        if warm is not None:
            sandbox.add_context(CodeContext(sandbox.spec, workdir, kernel=warm.kernel), default=True)
            return sandbox
        sandbox.users += 1  # not paused while its first kernel starts
        try:
            await sandbox.new_context()
        except BaseException:
            await self.kill(sandbox_id)
            raise
        finally:
            sandbox.users -= 1
        sandbox.touch()  # its TTL runs from when it is ready: a slow kernel start must not use it up
        return sandbox

    def get(self, sandbox_id: str, *, touch: bool = True) -> ServerSandbox:
        """The live sandbox; using it (``touch``) restarts its TTL clock, looking at it does not."""
        sandbox = self.sandboxes.get(sandbox_id)
        if sandbox is None:
            if sandbox_id in self.expired:
                raise SandboxExpired(f"sandbox {sandbox_id} expired and was removed")
            raise SandboxNotFound(f"no sandbox {sandbox_id}")
        if touch:
            sandbox.touch()
        return sandbox

    def list(self, metadata: Mapping[str, str]) -> list[ServerSandbox | PausedSandbox]:
        """Live and paused sandboxes whose metadata holds ``metadata``."""
        every: list[ServerSandbox | PausedSandbox] = [*self.sandboxes.values(), *self.paused.values()]
        return [s for s in every if all(s.metadata.get(k) == v for k, v in metadata.items())]

    async def kill(self, sandbox_id: str) -> None:
        sandbox = self.sandboxes.pop(sandbox_id, None)
        if sandbox is None:
            raise SandboxNotFound(f"no sandbox {sandbox_id}")
        self.forget_key(sandbox)
        try:
            await sandbox.kill()
        finally:
            self.release(sandbox_id)

    def forget_key(self, sandbox: ServerSandbox | PausedSandbox) -> None:
        if sandbox.idempotency_key and self._by_key.get(sandbox.idempotency_key) == sandbox.id:
            del self._by_key[sandbox.idempotency_key]

    async def _reap_forever(self) -> None:
        while True:
            await asyncio.sleep(self.config.reap_interval_seconds)
            for sandbox in list(self.sandboxes.values()):
                await sandbox.spare.drop_if_unused()
            for sandbox in [s for s in self.sandboxes.values() if s.is_expired()]:
                log.info("sandbox %s expired; removing it", sandbox.id)
                self.sandboxes.pop(sandbox.id, None)
                self.forget_key(sandbox)
                self.remember_expired(sandbox.id)
                try:
                    await sandbox.kill()
                except Exception:
                    log.exception("could not clean up expired sandbox %s", sandbox.id)
                self.release(sandbox.id)

    def remember_expired(self, sandbox_id: str) -> None:
        self.expired[sandbox_id] = None
        while len(self.expired) > EXPIRED_MEMORY:
            self.expired.popitem(last=False)

    async def close(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
        await self.pool.close()
        sandboxes, self.sandboxes = list(self.sandboxes.values()), {}
        await asyncio.gather(*(s.kill() for s in sandboxes), return_exceptions=True)
