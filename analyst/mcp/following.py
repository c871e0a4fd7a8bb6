"""Waiting for a turn started over MCP: its events read from the session's log (the truth, as the
live view's replays are) until the turn ends, each handed on as it comes for progress."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from channels.db import database_sync_to_async

from analyst.mcp import calls
from analyst.realtime import events
from analyst.turns.turns import OUTCOMES

POLL = 0.1  # seconds between reads of the log while the turn runs
ACCESS_CHECK = 1.0  # seconds between checks that the caller may still read the session

OnEvent = Callable[[dict[str, Any]], Awaitable[None]]
# Why the caller may no longer read the session (removed from its workspace), or None.
AccessLost = Callable[[], Awaitable[str | None]]


async def follow(
    turn_id: int, session_id: object, after: int, on_event: OnEvent, access_lost: AccessLost | None = None
) -> list[dict[str, Any]]:
    """The turn's events up to and including its end. Cancelled (the client gave up), it stops
    the turn, as Stop on the page does; so does a caller who lost the session meanwhile, whose
    call then ends with Refused."""
    seen: list[dict[str, Any]] = []
    loop = asyncio.get_running_loop()
    checked = loop.time()
    try:
        while True:
            if access_lost is not None and loop.time() - checked >= ACCESS_CHECK:
                checked = loop.time()
                why = await access_lost()
                if why is not None:
                    await asyncio.shield(database_sync_to_async(calls.cancel_turn)(turn_id))
                    raise calls.Refused(why)
            batch = await database_sync_to_async(events.after)(session_id, after)
            for event in batch:
                after = event["seq"]
                if event["turn"] != turn_id:
                    continue  # the session's other news: an upload placed, a file removed
                seen.append(event)
                await on_event(event)
                if event["type"] in OUTCOMES:
                    return seen
            if not batch:
                await asyncio.sleep(POLL)
    except asyncio.CancelledError:
        await asyncio.shield(database_sync_to_async(calls.cancel_turn)(turn_id))
        raise


async def placed(file_id: int, timeout: float) -> dict[str, Any] | None:
    """The upload's entry once it is in the sandbox (or failed); None if still on its way."""
    deadline = asyncio.get_running_loop().time() + timeout
    while (entry := await database_sync_to_async(calls.placed_file)(file_id)) is None:
        if asyncio.get_running_loop().time() > deadline:
            return None
        await asyncio.sleep(POLL * 2)
    return entry
