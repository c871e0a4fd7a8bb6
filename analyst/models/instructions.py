"""Instructions a user saved once, added to the system prompt of every session of theirs."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class SavedInstructions(models.Model):
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="saved_instructions"
    )
    text = models.TextField(blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "saved instructions"
