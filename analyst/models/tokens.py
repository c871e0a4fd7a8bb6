"""API tokens for scripts: only a hash is stored; the token is shown once, when made."""

from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.db import models

PREFIX = "ada_"
SHOWN = 8  # characters after PREFIX kept in clear, so a person can tell their tokens apart


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class ApiToken(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, blank=True)  # blank only on tokens made before names
    prefix = models.CharField(max_length=SHOWN, blank=True)  # the first SHOWN characters after PREFIX
    digest = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True)

    @classmethod
    def issue(cls, user: object, name: str = "") -> tuple[ApiToken, str]:
        """A new token for ``user``: (the stored record, the secret to show once)."""
        secret = PREFIX + secrets.token_urlsafe(32)
        shown = secret[len(PREFIX) : len(PREFIX) + SHOWN]
        return cls.objects.create(user=user, name=name, prefix=shown, digest=hash_token(secret)), secret
