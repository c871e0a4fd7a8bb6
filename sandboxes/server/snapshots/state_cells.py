"""The silent cells sandboxd runs for a kernel's state (kernel_state.py), and the named pipes its
bytes go through: shared by taking, restoring and the later loading of deferred parts."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

from sandboxes.errors import SnapshotFailed
from sandboxes.kernels.kernel import KernelDied, in_own_namespace
from sandboxes.server import files
from sandboxes.server.contexts import CodeContext
from sandboxes.server.snapshots import feed, kernel_state, state_report

STATE_DIR = ".sandbox-state"  # in the workdir; never part of the snapshot's files
KERNEL_STATE_SOURCE = Path(kernel_state.__file__).read_text()
STATE_TIMEOUT = 600.0
STATE_NAMESPACE = "__sandbox_state__"


def state_path(context_id: str) -> str:
    return f"{STATE_DIR}/{context_id}.pkl"


def cell(call: str) -> str:
    """A silent cell running kernel_state's ``call`` in a namespace of its own."""
    return in_own_namespace(f"{KERNEL_STATE_SOURCE}\n{call}", STATE_NAMESPACE)


async def run_state_cell(context: CodeContext, call: str, shown_id: object) -> dict[str, Any]:
    """Run kernel_state's ``call`` in ``context``; its report."""
    try:
        return state_report.parse(await context.run_silent(cell(call), STATE_TIMEOUT))
    except KernelDied as exc:
        raise SnapshotFailed(f"context {shown_id}: {exc}") from None


@contextlib.asynccontextmanager
async def pipe(workdir: Path, state: str, owner: tuple[int, int] | None) -> AsyncIterator[None]:
    """A named pipe at ``state`` in the workdir for the ``with`` block."""
    await asyncio.to_thread(files.make_fifo, workdir, state, owner=owner)
    try:
        yield
    finally:
        await asyncio.to_thread(files.remove, workdir, state)


@contextlib.asynccontextmanager
async def beside(pump: Callable[[threading.Event], None]) -> AsyncIterator[None]:
    """Run ``pump`` in a thread while the ``with`` block runs, then stop it and wait for it; what it
    raised is raised after a block that raised nothing (a damaged or oversized namespace says
    so, whatever the kernel reported)."""
    stop = threading.Event()
    pumping = asyncio.create_task(asyncio.to_thread(pump, stop))
    try:
        yield
    finally:
        stop.set()
        await asyncio.wait([pumping])
    pumping.result()


async def load_into(
    context: CodeContext, chunks: Iterator[memoryview], *, parts: int, shown_id: object
) -> dict[str, Any]:
    """Feed ``chunks`` (``parts`` consecutive pickled parts) to the context's kernel, which
    unpickles them into its namespace; its report. The caller holds the context between cells."""
    state = state_path(context.id)
    async with pipe(context.workdir, state, context.spec.owner):
        async with beside(functools.partial(feed.feed, chunks, context.workdir, state)):
            load = f"load({'/home/user/' + state!r}, {parts})"
            return await run_state_cell(context, load, shown_id)
