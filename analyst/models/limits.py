"""A user's own limits, where an admin raised (or lowered) the defaults in settings."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class UserLimits(models.Model):
    """Each field left empty takes the default from settings (ANALYST_LIMIT_*)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="limits")
    concurrent_turns = models.PositiveIntegerField(
        null=True, blank=True, help_text="Turns running at once across the user's sessions."
    )
    cells_per_minute = models.PositiveIntegerField(
        null=True, blank=True, help_text="Code cells the user runs (page, API, MCP) in any minute."
    )
    stored_bytes = models.PositiveBigIntegerField(
        null=True, blank=True, help_text="Uploads, charts and saved kernels, in bytes."
    )
    live_sandboxes = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Kernels running at once across the user's sessions (past it, idle ones are paused).",
    )

    class Meta:
        verbose_name = "user's limits"
        verbose_name_plural = "users' limits"

    def __str__(self) -> str:
        return f"limits of {self.user}"
