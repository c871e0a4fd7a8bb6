"""Large variables a restore did not wait for: loaded before the first cell that may use them, and
in the background once the kernel is idle, so a resumed session answers at once however much it
holds (kernel_state.py pickles each large variable alone, as a part of its own).

A cell may use a deferred variable when its code names it, or reaches the namespace in a way we
cannot read (``globals()``, ``eval``, magics...): then every deferred part is loaded first. The
user's functions and classes never lose a variable they name: kernel_state never defers those.
Everything that reads or saves the whole namespace (a snapshot, a pause, a fork, the variables
panel) loads the rest first. The bytes stay in a copy of the snapshot file until all are loaded.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sandboxes.errors import SandboxError, SnapshotFailed
from sandboxes.server.contexts import CodeContext
from sandboxes.server.snapshots import state_cells
from sandboxes.server.snapshots.archive import ArchiveReader

log = logging.getLogger(__name__)
# Code that reaches variables without naming them: every deferred part is loaded before it runs.
DYNAMIC = re.compile(r"globals|locals|vars|dir\b|eval|exec|getattr|__main__|__dict__|get_ipython|who|[%!]")
BACKGROUND_DELAY = 2.0  # after a restore, the first cells go first


@dataclass(frozen=True)
class Part:
    names: tuple[str, ...]
    start: int  # where it begins in the context's member
    size: int


class SharedFile:
    """A copy of the snapshot file that the deferred parts of a sandbox's contexts are read from,
    removed when the last of them is done with it."""

    def __init__(self, path: Path, users: int) -> None:
        self.path = path
        self.users = users

    def release(self) -> None:
        self.users -= 1
        if self.users <= 0:
            self.path.unlink(missing_ok=True)


class Deferred:
    def __init__(self, context: CodeContext, source: SharedFile, member: str, parts: Sequence[Part]) -> None:
        self.context = context
        self.source = source
        self.member = member
        self.parts = list(parts)
        self.lost: list[str] = []  # why parts could not be loaded, until the next cell says it
        self._lock = asyncio.Lock()
        self._background: asyncio.Task[None] | None = None

    @property
    def names(self) -> set[str]:
        return {name for part in self.parts for name in part.names}

    def needed_by(self, code: str) -> bool:
        """Whether ``code`` may use a variable not loaded yet."""
        if not self.parts:
            return False
        if DYNAMIC.search(code):
            return True
        return any(re.search(rf"\b{re.escape(name)}\b", code) for name in self.names)

    def start_background(self) -> None:
        self._background = asyncio.create_task(self._load_in_background())

    async def load_all(self) -> None:
        """Every deferred part, now (waiting for a part the background is loading). Raises
        SnapshotFailed if one cannot be loaded: the variables it held are gone."""
        async with self._lock:
            while self.parts:
                await self._load(self.parts[0])

    async def _load_in_background(self) -> None:
        await asyncio.sleep(BACKGROUND_DELAY)
        while self.parts:
            async with self._lock:
                if not self.parts:
                    return
                try:
                    await self._load(self.parts[0])
                except SandboxError as exc:
                    log.warning("context %s: a deferred part could not be loaded: %s", self.context.id, exc)

    async def _load(self, part: Part) -> None:
        """Load ``part`` after the running cell (one asked for meanwhile waits). A part that
        fails, or whose bytes are damaged, is dropped, as its variables are gone."""
        names = ", ".join(part.names)
        async with self.context.between_cells():
            try:
                with ArchiveReader(self.source.path) as reader:
                    chunks = reader.read_chunks(self.member, part.start, part.size)
                    # Pickled alone and large by design: however long it takes (not a restore's limit).
                    layout = [(list(part.names), part.size, None)]
                    report = await state_cells.load_into(
                        self.context, chunks, layout=layout, limit=None, shown_id=self.context.id
                    )
            except SandboxError as exc:  # damaged bytes, a kernel that died meanwhile
                raise self._lose(f"the saved {names} could not be loaded: {exc.message}") from None
            finally:
                self._done_with(part)
        if "error" in report:
            raise self._lose(f"the saved {names} could not be loaded: {report.get('message')}")

    def _lose(self, why: str) -> SnapshotFailed:
        self.lost.append(why)
        return SnapshotFailed(why)

    def take_lost(self) -> list[str]:
        """Why parts could not be loaded since this was last asked (in the background too)."""
        lost, self.lost = self.lost, []
        return lost

    def _done_with(self, part: Part) -> None:
        if part in self.parts:
            self.parts.remove(part)
            if not self.parts:
                self.source.release()

    def discard(self) -> None:
        """The context is closing: nothing more is loaded."""
        if self._background is not None:
            self._background.cancel()
        if self.parts:
            self.parts.clear()
            self.source.release()


def eager_of(saved: dict[str, object], parts: int) -> list[int]:
    """Where each of a saved context's leading parts begins in the memo they share: one part at 0
    for a snapshot written before they were pickled one by one (or before parts)."""
    listed = saved.get("eager")
    if isinstance(listed, list) and 0 < len(listed) <= parts and all(isinstance(n, int) for n in listed):
        return list(listed)
    return [0]


def parts_of(saved: dict[str, object]) -> list[Part]:
    """A saved context's parts with their offsets; [] for a snapshot written before parts."""
    listed = saved.get("parts")
    if not isinstance(listed, list):
        return []
    parts, start = [], 0
    for entry in listed:
        with contextlib.suppress(KeyError, TypeError, ValueError):
            size = int(entry["size"])
            parts.append(Part(tuple(str(n) for n in entry["names"]), start, size))
            start += size
    return parts
