"""A user's running kernels: each session's sandbox is labelled with its owner, and a user past
their limit of running kernels (ANALYST_LIMIT_LIVE_SANDBOXES, or their UserLimits) has their
least recently used other ones paused, not refused: a paused kernel costs the machine no memory
and comes back, with its variables, when its session is used again."""

from __future__ import annotations

import logging

from analyst.accounts.limits import limits_for
from analyst.kernels import hosts as sandbox_hosts
from analyst.models import AnalysisSession
from sandboxes import ContextBusy, Sandbox, SandboxError, SandboxInfo

log = logging.getLogger(__name__)


def metadata_for(session: AnalysisSession) -> dict[str, str]:
    """What sandboxd is told of a session's sandbox: the session and its owner."""
    return {"session": str(session.id), "user": str(session.owner_id)}


def running_for(user_id: object) -> list[tuple[str, SandboxInfo]]:
    """The user's running sandboxes on every host, (host, info), the least recently used first.
    Raises SandboxError."""
    running = [
        (host, info)
        for host in sandbox_hosts.configured() or [""]
        for info in Sandbox.list({"user": str(user_id)}, url=sandbox_hosts.url(host))
        if info.state == "running"
    ]
    return sorted(running, key=lambda found: found[1].expires_in - found[1].ttl_seconds)


def make_room_for(session: AnalysisSession) -> None:
    """Before ``session``'s kernel runs: pause its owner's other running kernels past their
    limit, least recently used first. A busy one is left running (its turn counts against the
    limit of turns at once). Nothing is said in ``session``: the pause is another session's
    news, and that session says so itself when its kernel resumes (a ``kernel_resumed`` line)."""
    limit = limits_for(session.owner).live_sandboxes
    if not limit:
        return
    try:
        others = [
            found for found in running_for(session.owner_id) if found[1].sandbox_id != session.sandbox_id
        ]
    except SandboxError as exc:
        log.warning("could not list the sandboxes of user %s: %s", session.owner_id, exc)
        return
    for host, info in others[: max(0, len(others) - (limit - 1))]:
        try:
            Sandbox.pause_by_id(info.sandbox_id, url=sandbox_hosts.url(host))
        except ContextBusy:
            continue
        except SandboxError as exc:
            log.warning("could not pause sandbox %s: %s", info.sandbox_id, exc)
            continue
        log.info(
            "paused sandbox %s of session %s to make room for session %s (limit %d)",
            info.sandbox_id, info.metadata.get("session", ""), session.id, limit,
        )  # fmt: skip
