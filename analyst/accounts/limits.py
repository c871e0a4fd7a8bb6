"""Each user's share of the machine: turns running at once, code cells per minute, bytes stored
(uploads, charts, saved kernels) and kernels running (kernels/live_sandboxes.py keeps to that
one; web/limits_shown.py shows them all). The defaults are settings (ANALYST_LIMIT_*, 0 for
none); an admin may set other figures for one user (UserLimits). Without them, one user could
take every worker and sandbox, and fill the disk, for everyone.

Checked where work starts (turns.do_start_turn, uploads.do_upload), so the page, the JSON API and
MCP refuse alike, with the same message. A replay's cells count as they run (cell_wait): Restart
and run all pauses between cells at the limit rather than pass it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q
from django.utils import timezone

from analyst.accounts.storage import stored_bytes
from analyst.lib.sizes import human_size
from analyst.models import Event, Turn, UserLimits

MINUTE = dt.timedelta(minutes=1)
# The web process sends a turn to the queue as soon as it is stored; one still unsent after this
# long is one the queue did not take (Redis down): it waits for the reconciler, it does not run.
# The reconciler's NEVER_SENT_GRACE, from the same reasoning.
SEND_GRACE = dt.timedelta(seconds=3)


class LimitReached(Exception):
    """The user is at one of their limits; ``code`` says which (the API's error code)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Limits:
    concurrent_turns: int
    cells_per_minute: int
    stored_bytes: int
    live_sandboxes: int


def limits_for(user: AbstractBaseUser) -> Limits:
    own = UserLimits.objects.filter(user_id=user.pk).first()

    def pick(field: str, default: int) -> int:
        value = getattr(own, field, None) if own else None
        return default if value is None else value

    return Limits(
        concurrent_turns=pick("concurrent_turns", settings.ANALYST_LIMIT_CONCURRENT_TURNS),
        cells_per_minute=pick("cells_per_minute", settings.ANALYST_LIMIT_CELLS_PER_MINUTE),
        stored_bytes=pick("stored_bytes", settings.ANALYST_LIMIT_STORED_BYTES),
        live_sandboxes=pick("live_sandboxes", settings.ANALYST_LIMIT_LIVE_SANDBOXES),
    )


def hold_user(user: AbstractBaseUser) -> None:
    """Lock the user's row until the transaction ends: requests in two sessions at once are then
    counted one after the other (each session's own row lock does not see the other session)."""
    get_user_model().objects.select_for_update().filter(pk=user.pk).first()


def check_turn(user: AbstractBaseUser, *, kind: str, now: dt.datetime | None = None) -> None:
    """Raises LimitReached when ``user`` may not start a turn of ``kind`` now. Call it under
    hold_user, so that two requests at once cannot both take the last place."""
    now = now or timezone.now()
    limits = limits_for(user)
    # A restart stops the session's running turn (turns.do_restart): that one is ending, not held.
    running = unfinished_turns(user, now=now, stopping=kind != Turn.Kind.RESTART)
    if limits.concurrent_turns and running >= limits.concurrent_turns:
        raise LimitReached(
            "concurrent_turns",
            f"You have {running} turns running at once across your sessions, your limit; wait for one"
            " to end, or stop one, and send this again.",
        )
    waiting = waiting_turns(user, now=now)
    most = settings.ANALYST_LIMIT_WAITING_TURNS
    if most and waiting >= most:
        raise LimitReached(
            "waiting_turns",
            f"You have {waiting} requests saved while the task queue was unreachable, waiting to run"
            " (the most that may wait); they run as soon as the queue is back. Send this again then.",
        )
    if kind in (Turn.Kind.CELL, Turn.Kind.REPLAY):  # a replay needs room for its first cell
        wait = cell_wait(user, now=now, limit=limits.cells_per_minute)
        if wait:
            raise LimitReached(
                "cells_per_minute",
                f"You have run {limits.cells_per_minute} cells in the last minute, your limit; the"
                f" next can run in {wait} s.",
            )


def cell_wait(user: AbstractBaseUser, *, now: dt.datetime | None = None, limit: int | None = None) -> int:
    """Whole seconds until ``user`` may run another cell under their cells-per-minute limit
    (``limit``, theirs when None); 0 when they may now."""
    limit = limits_for(user).cells_per_minute if limit is None else limit
    if not limit:
        return 0
    now = now or timezone.now()
    times = cell_times(user, since=now - MINUTE)
    if len(times) < limit:
        return 0
    # Room comes back as the cells that fill the window leave it, oldest first.
    frees_at = times[len(times) - limit] + MINUTE
    return max(1, round((frees_at - now).total_seconds()))


def cell_times(user: AbstractBaseUser, *, since: dt.datetime) -> list[dt.datetime]:
    """When each cell ``user`` ran after ``since`` was started, oldest first: the cells they sent
    (counted when sent) and those their replays ran (counted as each ran), but not the model's."""
    sent = Turn.objects.filter(requested_by=user, kind=Turn.Kind.CELL, created_at__gt=since)
    replays = Turn.objects.filter(requested_by=user, kind=Turn.Kind.REPLAY).exclude(finished_at__lte=since)
    replayed = Event.objects.filter(turn__in=replays, type="cell", created_at__gt=since)
    times = [*sent.values_list("created_at", flat=True), *replayed.values_list("created_at", flat=True)]
    return sorted(times)


def check_storage(user: AbstractBaseUser, *, adding: int, what: str, stored: int | None = None) -> None:
    """Raises LimitReached when storing ``adding`` more bytes (``what``, for the message) would
    take ``user`` past their storage limit (``stored``: what they took before, when counted already)."""
    limit = limits_for(user).stored_bytes
    if not limit:
        return
    stored = stored_bytes(user) if stored is None else stored
    if stored + adding > limit:
        raise LimitReached(
            "storage_limit",
            f"{what} ({human_size(adding)}) would take your files, charts and saved kernels past your"
            f" {human_size(limit)} (they take {human_size(stored)}); delete files or sessions to make room.",
        )


def unfinished_turns(user: AbstractBaseUser, *, now: dt.datetime | None = None, stopping: bool = True) -> int:
    """Turns that think or run a cell, or are on their way to a worker: one only saving its kernel
    takes no worker's attention, and one the queue did not take is waiting (waiting_turns).
    ``stopping``: whether turns asked to stop count too."""
    unfinished = Turn.objects.filter(requested_by=user).exclude(status__in=Turn.FINISHED)
    if not stopping:
        unfinished = unfinished.exclude(cancel_requested=True)
    running = unfinished.exclude(status=Turn.Status.RUNNING, saving=True)
    return running.exclude(_unsent(now or timezone.now())).count()


def waiting_turns(user: AbstractBaseUser, *, now: dt.datetime | None = None) -> int:
    """The user's turns stored while the queue was unreachable, that the reconciler sends once it
    is back."""
    return Turn.objects.filter(_unsent(now or timezone.now()), requested_by=user).count()


def _unsent(now: dt.datetime) -> Q:
    return Q(status=Turn.Status.QUEUED, enqueued_at=None, created_at__lt=now - SEND_GRACE)
