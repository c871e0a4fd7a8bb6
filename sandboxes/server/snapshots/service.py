"""Snapshot, restore and fork: a sandbox's files and each context's namespace, kept in a file.

Each kernel pickles its own namespace (kernel_state.py, sent as a silent cell) into a named
pipe in a hidden folder of its workdir, which we drain into the snapshot (drain.py):
we only move those bytes. A restore starts a sandbox, puts the files back, and has each new
kernel unpickle its namespace itself, fed through a named pipe (feed.py). Nothing
from a sandbox is ever unpickled by this process.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import shutil
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Mapping
from pathlib import Path
from typing import Any

from sandboxes.errors import (
    InvalidPath,
    SnapshotCorrupt,
    SnapshotFailed,
    TemplateNotFound,
)
from sandboxes.server import files
from sandboxes.server.contexts import CodeContext, History
from sandboxes.server.registry import Registry
from sandboxes.server.sandbox import ServerSandbox
from sandboxes.server.snapshots import deferred, drain, state_cells, state_report
from sandboxes.server.snapshots.archive import ArchiveReader, ArchiveWriter, StreamedMember, too_large
from sandboxes.server.snapshots.store import SnapshotStore

log = logging.getLogger(__name__)
WHOLE_MEMBER = 1 << 62  # the size of a part that runs to the end of its member


def public_info(manifest: Mapping[str, Any], size: int) -> dict[str, Any]:
    """What the API shows of a snapshot: no checksums, no cell history."""
    return {
        "id": manifest["id"],
        "sandbox_id": manifest["sandbox_id"],
        "template": manifest["template"],
        "metadata": manifest["metadata"],
        "created_at": manifest["created_at"],
        "size": size,
        "files": manifest["files"],
        "contexts": [
            {"id": c["id"], "default": c["default"], "saved": c["saved"], "unsaved": c["unsaved"]}
            for c in manifest["contexts"]
        ],
    }


class Snapshots:
    def __init__(
        self,
        registry: Registry,
        store: SnapshotStore,
        *,
        max_bytes: int,
        scratch: Path,
        restore_limit: float = 5.0,
    ) -> None:
        self.registry = registry
        self.store = store
        self.max_bytes = max_bytes
        # Seconds a restore may spend unpickling a context's variables, not counting the large
        # ones it loads later (kernel_state.load): what is over is left out and named.
        self.restore_limit = restore_limit
        self.scratch = scratch
        scratch.mkdir(parents=True, exist_ok=True)
        for stale in scratch.glob("*.partial"):  # left by a sandboxd that was killed mid-snapshot
            stale.unlink()

    # Taking ---------------------------------------------------------------------------------

    async def take(self, sandbox: ServerSandbox, *, whole: bool = False) -> dict[str, Any]:
        """Snapshot ``sandbox`` into the store; its public info. ``whole``: raise
        SnapshotFailed rather than leave out what cannot be pickled."""
        snapshot_id = uuid.uuid4().hex
        async with self._written(sandbox, snapshot_id, whole=whole) as (path, manifest):
            size = path.stat().st_size
            await asyncio.to_thread(self.store.put, snapshot_id, path)
        return public_info(manifest, size)

    @contextlib.asynccontextmanager
    async def _written(
        self, sandbox: ServerSandbox, snapshot_id: str, *, whole: bool = False
    ) -> AsyncIterator[tuple[Path, dict[str, Any]]]:
        """A snapshot file of ``sandbox`` in scratch space for the ``with`` block."""
        path = self.scratch / f"{snapshot_id}.partial"
        writer = await asyncio.to_thread(ArchiveWriter, path, self.max_bytes)
        try:
            for context in list(sandbox.contexts.values()):
                await context.complete_state()  # what a restore deferred is saved again too
            async with _all_exclusive(list(sandbox.contexts.values())):
                contexts = []
                for context in sandbox.contexts.values():
                    contexts.append(await self._save_context(sandbox, context, writer, whole=whole))
                await asyncio.to_thread(
                    writer.add_workdir, sandbox.workdir, skip=frozenset({state_cells.STATE_DIR})
                )
            manifest = {
                "id": snapshot_id,
                "sandbox_id": sandbox.id,
                "template": sandbox.template,
                "metadata": sandbox.metadata,
                "created_at": time.time(),
                "contexts": contexts,
            }
            manifest = await asyncio.to_thread(writer.finish, manifest)
        except BaseException:
            await asyncio.to_thread(writer.abort)
            raise
        try:
            yield path, manifest
        finally:
            path.unlink(missing_ok=True)

    async def _save_context(
        self, sandbox: ServerSandbox, context: CodeContext, writer: ArchiveWriter, *, whole: bool
    ) -> dict[str, Any]:
        member = await asyncio.to_thread(writer.begin_member, f"contexts/{context.id}.pkl")
        report = await self._save_namespace(sandbox, context, member, drop_unpicklable=False)
        if report.get("error") == "unpicklable" and whole:
            raise SnapshotFailed(f"context {context.id} holds variables that cannot be saved")
        if report.get("error") == "unpicklable":
            await asyncio.to_thread(member.reset)
            report = await self._save_namespace(sandbox, context, member, drop_unpicklable=True)
        if report.get("error") == "too_large":
            raise too_large(self.max_bytes)
        if "error" in report:
            message = report.get("message")
            raise SnapshotFailed(f"context {context.id}'s state could not be saved: {message}")
        if report.get("size") != member.size:
            raise SnapshotFailed(f"context {context.id}'s state did not arrive whole")
        await asyncio.to_thread(member.finish)
        return {
            "id": context.id,
            "default": context.id == sandbox.default_context_id,
            "saved": report.get("saved", []),
            "unsaved": report.get("unsaved", {}),
            "history": context.history.cells,
            "history_complete": context.history.complete,
            "parts": report.get("parts", []),
            "eager": report.get("eager", [0]),
        }

    async def _save_namespace(
        self, sandbox: ServerSandbox, context: CodeContext, member: StreamedMember, *, drop_unpicklable: bool
    ) -> dict[str, Any]:
        """One attempt: the kernel pickles into a named pipe that we drain into ``member``."""
        state = state_cells.state_path(context.id)
        async with state_cells.pipe(sandbox.workdir, state, sandbox.owner):
            fd = await asyncio.to_thread(files.open_fifo_for_reading, sandbox.workdir, state)
            async with state_cells.beside(functools.partial(drain.drain, fd, member.write)):
                call = f"save({'/home/user/' + state!r}, {member.room()}, {drop_unpicklable})"
                return await state_cells.run_state_cell(context, call, context.id)

    # Restoring ------------------------------------------------------------------------------

    async def restore(
        self,
        snapshot_id: str,
        *,
        ttl_seconds: int,
        metadata: Mapping[str, str] | None,
        replay: bool,
        sandbox_id: str | None = None,
    ) -> tuple[ServerSandbox, dict[str, Any]]:
        """A new live sandbox in the snapshot's state (``sandbox_id``: under that id, as a
        paused sandbox resumes)."""
        with self.store.fetch(snapshot_id) as path:
            return await self._restore_file(
                path, ttl_seconds=ttl_seconds, metadata=metadata, replay=replay, sandbox_id=sandbox_id
            )

    async def fork(
        self, sandbox: ServerSandbox, *, ttl_seconds: int, metadata: Mapping[str, str] | None
    ) -> tuple[ServerSandbox, dict[str, Any]]:
        """A new sandbox in the same state, independent from then on (nothing is stored)."""
        async with self._written(sandbox, uuid.uuid4().hex) as (path, _):
            return await self._restore_file(path, ttl_seconds=ttl_seconds, metadata=metadata, replay=False)

    async def info(self, snapshot_id: str) -> dict[str, Any]:
        with self.store.fetch(snapshot_id) as path:
            manifest = await asyncio.to_thread(_manifest, path)
            try:
                return public_info(manifest, path.stat().st_size)
            except (KeyError, TypeError):
                raise SnapshotCorrupt("the snapshot's manifest is incomplete") from None

    async def copy(self, snapshot_id: str) -> tuple[str, dict[str, Any]]:
        """A copy of the snapshot under a new id, and its manifest (a paused sandbox made from a
        snapshot owns its copy: deleting the snapshot leaves it whole)."""
        copy_id = uuid.uuid4().hex
        with self.store.fetch(snapshot_id) as path:
            manifest = await asyncio.to_thread(_manifest, path)
            partial = self.scratch / f"{copy_id}.partial"
            try:
                await asyncio.to_thread(_link_or_copy, path, partial)
                await asyncio.to_thread(self.store.put, copy_id, partial)
            finally:
                partial.unlink(missing_ok=True)
        return copy_id, manifest

    async def _restore_file(
        self,
        path: Path,
        *,
        ttl_seconds: int,
        metadata: Mapping[str, str] | None,
        replay: bool,
        sandbox_id: str | None = None,
    ) -> tuple[ServerSandbox, dict[str, Any]]:
        reader = await asyncio.to_thread(ArchiveReader, path)
        try:
            manifest = reader.manifest
            try:
                template, saved_contexts = str(manifest["template"]), list(manifest["contexts"])
                saved_metadata = dict(manifest["metadata"])
            except (KeyError, TypeError, ValueError):
                raise SnapshotCorrupt("the snapshot's manifest is incomplete") from None
            if template not in self.registry.specs:
                raise TemplateNotFound(f"the snapshot needs template {template!r}, not on this service")
            sandbox = await self.registry.create(
                template=template,
                ttl_seconds=ttl_seconds,
                metadata=saved_metadata if metadata is None else metadata,
                sandbox_id=sandbox_id,
            )
            sandbox.users += 1  # not paused while it is filled
            try:
                report = await self._fill(sandbox, path, reader, saved_contexts=saved_contexts, replay=replay)
            except BaseException:
                await self.registry.kill(sandbox.id)
                raise
            finally:
                sandbox.users -= 1
        finally:
            reader.close()
        return sandbox, {"snapshot_id": manifest.get("id"), "contexts": report}

    async def _fill(
        self,
        sandbox: ServerSandbox,
        path: Path,
        reader: ArchiveReader,
        *,
        saved_contexts: list[Any],
        replay: bool,
    ) -> list[dict[str, Any]]:
        """Put the files back while the kernels load their namespaces (a replay waits for the
        files: its cells may read them). A namespace that fails to load while files are still
        being written is loaded again once they are all back, since it may import from them (the
        user's own module, a package they installed); deferred parts start loading then too."""
        files_written = asyncio.create_task(
            asyncio.to_thread(_restore_workdir, path, sandbox.workdir, sandbox.owner)
        )
        shared = await self._deferred_source(path, saved_contexts, replay=replay)
        try:
            if replay:
                await files_written
            report = []
            for saved in saved_contexts:
                if saved.get("default"):
                    context = sandbox.context("default")
                else:
                    context = await sandbox.new_context()
                sandbox.rename_context(context.id, str(saved["id"]))
                loaded = await self._load_context(
                    sandbox, context, reader, saved, replay=replay, shared=shared, files=files_written
                )
                report.append(loaded)
        except BaseException:
            if shared is not None:
                shared.path.unlink(missing_ok=True)
            raise
        finally:
            await asyncio.wait([files_written])
        files_written.result()  # raises what writing the files raised
        for context in sandbox.contexts.values():
            if context.deferred is not None:
                context.deferred.start_background()
        return report

    async def _deferred_source(
        self, path: Path, saved_contexts: list[Any], *, replay: bool
    ) -> deferred.SharedFile | None:
        """A copy of the snapshot file for the parts the contexts will load later, if any will."""
        lazy = 0 if replay else sum(_has_deferred(saved) for saved in saved_contexts)
        if not lazy:
            return None
        copy = self.scratch / f"{uuid.uuid4().hex}.deferred"
        await asyncio.to_thread(_link_or_copy, path, copy)
        return deferred.SharedFile(copy, lazy)

    async def _load_context(
        self,
        sandbox: ServerSandbox,
        context: CodeContext,
        reader: ArchiveReader,
        saved: Mapping[str, Any],
        *,
        replay: bool,
        shared: deferred.SharedFile | None,
        files: asyncio.Future[None],
    ) -> dict[str, Any]:
        """Load the context's namespace: its leading parts now, within the restore's limit, and
        its large ones later (``shared`` holds them) when it has some, else all of it. Variables
        whose unpickling the limit stopped are left out, named in "late" (and in "unsaved": they
        are gone). ``files``: the workdir's files being put back."""
        history = History(list(saved.get("history") or []), bool(saved.get("history_complete")))
        unsaved = state_report.unsaved_names(saved.get("unsaved"))
        replayed = replay and bool(unsaved) and history.complete
        member = f"contexts/{saved['id']}.pkl"
        parts = deferred.parts_of(dict(saved))
        eager = deferred.eager_of(dict(saved), len(parts))
        later = parts[len(eager) :] if shared is not None else []
        loaded_now = parts[: len(parts) - len(later)]
        layout: list[state_cells.Layout] = [
            (list(part.names), part.size, eager[i] if i < len(eager) else None)
            for i, part in enumerate(loaded_now)
        ] or [([], WHOLE_MEMBER, 0)]  # a snapshot from before parts: one pickle, the whole member
        size = sum(part.size for part in loaded_now) if loaded_now else None
        started = time.monotonic()
        async with context.exclusive():
            if replayed:  # rebuild what could not be saved; the saved values then go on top
                for cell in history.cells:
                    await context.run_silent(cell, self.registry.config.default_cell_timeout)
                started = time.monotonic()

            def load() -> Awaitable[dict[str, Any]]:
                chunks = reader.read_chunks(member, 0, size)
                left = max(0.0, self.restore_limit - (time.monotonic() - started))
                return state_cells.load_into(context, chunks, layout=layout, limit=left, shown_id=saved["id"])

            files_were_back = files.done()
            report = await load()
            if "error" in report and not files_were_back:
                await asyncio.wait([files])  # it may have imported from a file not yet whole
                report = await load()
        if "error" in report:
            message = report.get("message")
            raise SnapshotFailed(f"context {saved['id']}'s state could not be loaded: {message}")
        late = list(report.get("late", []))
        if late:
            log.warning(
                "context %s: left out what took longer than the restore's %.1f s to unpickle: %s",
                saved["id"],
                self.restore_limit,
                ", ".join(late),
            )
        context.history = history
        if later:
            assert shared is not None
            context.deferred = deferred.Deferred(context, shared, member, later)
        waiting = sorted(context.deferred.names) if later and context.deferred else []
        return {
            "id": context.id,
            "restored": sorted([*report.get("restored", []), *waiting]),
            "deferred": waiting,
            "unsaved": sorted({*unsaved, *late}),
            "late": late,
            "replayed": replayed,
        }


def _has_deferred(saved: Any) -> bool:
    parts = deferred.parts_of(dict(saved))
    return len(parts) > len(deferred.eager_of(dict(saved), len(parts)))


def _manifest(path: Path) -> dict[str, Any]:
    with ArchiveReader(path) as reader:
        return reader.manifest


def _link_or_copy(source: Path, target: Path) -> None:
    try:
        os.link(source, target)  # snapshot files are never written in place: sharing is safe
    except OSError:
        shutil.copyfile(source, target)


def _restore_workdir(path: Path, workdir: Path, owner: tuple[int, int] | None) -> None:
    """With a reader of its own: a tar file object cannot serve two threads."""
    with ArchiveReader(path) as reader:
        try:
            reader.restore_workdir(workdir, owner)
        except InvalidPath as exc:
            raise SnapshotCorrupt(f"the snapshot holds a file it cannot: {exc}") from None


@contextlib.asynccontextmanager
async def _all_exclusive(contexts: list[CodeContext]) -> AsyncIterator[None]:
    async with contextlib.AsyncExitStack() as stack:
        for context in contexts:
            await stack.enter_async_context(context.exclusive())
        yield
