"""The session sandboxes a worker process has connected to, kept across turns (each with its own
kept-alive connection to sandboxd)."""

from __future__ import annotations

from collections import OrderedDict

from analyst.lib.per_process import PerProcess
from sandboxes import Sandbox, SandboxError

KEPT_SANDBOXES = 32

_sandboxes: PerProcess[OrderedDict[str, Sandbox]] = PerProcess(OrderedDict)


def sandbox(sandbox_id: str, *, url: str | None = None) -> Sandbox:
    """A connected Sandbox (on the sandboxd at ``url``, default SANDBOXD_URL), running (resumed
    if it was paused: its ``resumed`` says so), reused while this process keeps it. Raises as
    Sandbox.connect does."""
    kept = _sandboxes.get().pop(sandbox_id, None)
    if kept is None:
        return keep(Sandbox.connect(sandbox_id, url=url))
    try:
        kept.resume()
    except SandboxError:
        kept.close()
        raise
    return keep(kept)


def keep(sandbox: Sandbox) -> Sandbox:
    """Keep a sandbox for the turns that follow (the most recently used are kept)."""
    kept = _sandboxes.get()
    kept[sandbox.sandbox_id] = sandbox
    while len(kept) > KEPT_SANDBOXES:
        kept.popitem(last=False)[1].close()
    return sandbox


def forget(sandbox_id: str) -> None:
    """Drop a sandbox that turned out to be gone."""
    gone = _sandboxes.get().pop(sandbox_id, None)
    if gone is not None:
        gone.close()
