"""The admin site: where an admin raises one user's limits past the defaults."""

from __future__ import annotations

from django.contrib import admin

from analyst.models import UserLimits


@admin.register(UserLimits)
class UserLimitsAdmin(admin.ModelAdmin):
    list_display = ("user", "concurrent_turns", "cells_per_minute", "stored_bytes", "live_sandboxes")
    search_fields = ("user__username",)
    raw_id_fields = ("user",)
