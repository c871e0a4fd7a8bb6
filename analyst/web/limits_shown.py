"""The sessions page's lines on limits: each of the user's limits beside what they use of it now."""

from __future__ import annotations

import datetime as dt

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from analyst.accounts import limits
from analyst.kernels.live_sandboxes import running_for
from analyst.lib.sizes import human_size
from analyst.models import Turn
from sandboxes import SandboxError


def usage(user: AbstractBaseUser, *, now: dt.datetime | None = None) -> dict[str, dict[str, int]]:
    """Each limit beside what the user uses of it now, for their sessions page."""
    now = now or timezone.now()
    user_limits = limits.limits_for(user)
    cells = Turn.objects.filter(requested_by=user, kind=Turn.Kind.CELL, created_at__gt=now - limits.MINUTE)
    return {
        "concurrent_turns": {"used": limits.unfinished_turns(user), "limit": user_limits.concurrent_turns},
        "cells_per_minute": {"used": cells.count(), "limit": user_limits.cells_per_minute},
        "stored_bytes": {"used": limits.stored_bytes(user), "limit": user_limits.stored_bytes},
        **_live_sandboxes(user, user_limits.live_sandboxes),
    }


def _live_sandboxes(user: AbstractBaseUser, limit: int) -> dict[str, dict[str, int]]:
    """The user's running kernels beside their limit; nothing when sandboxd cannot say."""
    try:
        return {"live_sandboxes": {"used": len(running_for(user.pk)), "limit": limit}}
    except SandboxError:
        return {}


def shown(user: AbstractBaseUser) -> list[dict[str, str]]:
    """usage() as the sessions page says it: a label, and "used of limit" (or "no limit")."""
    labels = {
        "concurrent_turns": ("Turns running at once", str),
        "cells_per_minute": ("Code cells in the last minute", str),
        "stored_bytes": ("Files, charts and saved kernels", human_size),
        "live_sandboxes": ("Kernels running (idle ones pause)", str),
    }
    lines = []
    for key, figures in usage(user).items():
        label, say = labels[key]
        limit = figures["limit"]
        text = f"{say(figures['used'])} of {say(limit)}" if limit else f"{say(figures['used'])} (no limit)"
        lines.append({"key": key, "label": label, "text": text})
    return lines
