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
# Past a load's limit, what the kernel is given to stop the part it is on and report: its alarm
# rings again every 50 ms, so only code that will not be interrupted (C code, signals blocked)
# takes it all.
LOAD_GRACE = 3.0
# A part as kernel_state.load takes it: its names, its size, and where it begins in the memo the
# parts before it share (None: a part pickled alone, loaded however long it takes).
Layout = tuple[list[str], int, int | None]


def state_path(context_id: str) -> str:
    return f"{STATE_DIR}/{context_id}.pkl"


def cell(call: str) -> str:
    """A silent cell running kernel_state's ``call`` in a namespace of its own."""
    return in_own_namespace(f"{KERNEL_STATE_SOURCE}\n{call}", STATE_NAMESPACE)


async def run_state_cell(
    context: CodeContext, call: str, shown_id: object, timeout: float = STATE_TIMEOUT
) -> dict[str, Any]:
    """Run kernel_state's ``call`` in ``context``; its report."""
    try:
        return state_report.parse(await context.run_silent(cell(call), timeout))
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
    context: CodeContext,
    chunks: Iterator[memoryview],
    *,
    layout: list[Layout],
    limit: float | None,
    shown_id: object,
) -> dict[str, Any]:
    """Feed ``chunks`` (the consecutive pickled parts of ``layout``) to the context's kernel,
    which unpickles them into its namespace, those with a place in a shared memo within ``limit``
    seconds (kernel_state.load); its report. A kernel that does not give way is restarted
    (SnapshotFailed) once a grace past the limit is over too, when every part is bounded. The
    caller holds the context between cells."""
    state = state_path(context.id)
    bounded = limit is not None and all(memo is not None for _, _, memo in layout)
    timeout = limit + LOAD_GRACE if bounded and limit is not None else STATE_TIMEOUT
    async with pipe(context.workdir, state, context.spec.owner):
        async with beside(functools.partial(feed.feed, chunks, context.workdir, state)):
            load = f"load({'/home/user/' + state!r}, {layout!r}, {limit!r})"
            return await run_state_cell(context, load, shown_id, timeout)
