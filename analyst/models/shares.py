from __future__ import annotations

import secrets

from django.db import models

from analyst.models.sessions import AnalysisSession


def new_token() -> str:
    return secrets.token_urlsafe(32)  # 256 bits: not guessable, not enumerable


class ShareLink(models.Model):
    """Read-only access to a session for anyone holding the token, until revoked."""

    session = models.ForeignKey(AnalysisSession, on_delete=models.CASCADE, related_name="share_links")
    token = models.CharField(max_length=64, unique=True, default=new_token)
    allow_downloads = models.BooleanField(default=False)
    # A fork through the link gets the kernel's variables: pickled objects, code that runs in
    # the forker's kernel when restored. Only when the owner says so.
    allow_fork_state = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
