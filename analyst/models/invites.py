"""Invite codes for signups when ANALYST_SIGNUP=invite: only a hash is stored, with uses left."""

from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.db import models


def hash_code(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


class Invite(models.Model):
    digest = models.CharField(max_length=64, unique=True)
    uses_left = models.PositiveIntegerField(default=1)
    # Who made it (`manage.py invite --by USERNAME`); null when an operator made it for nobody's name.
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="invites"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    @classmethod
    def issue(cls, *, uses: int = 1, created_by: object = None) -> tuple[Invite, str]:
        """A new invite good for ``uses`` signups: (the stored record, the code to hand out)."""
        code = secrets.token_urlsafe(16)  # 128 bits: not guessable
        return cls.objects.create(digest=hash_code(code), uses_left=uses, created_by=created_by), code

    @classmethod
    def is_usable(cls, code: str) -> bool:
        return cls.objects.filter(digest=hash_code(code), uses_left__gt=0).exists()

    @classmethod
    def spend(cls, code: str) -> bool:
        """Take one use of ``code``, atomically; False when it is unknown or used up. Call it in the
        transaction that makes the account, so a failed signup gives the use back."""
        return bool(
            cls.objects.filter(digest=hash_code(code), uses_left__gt=0).update(
                uses_left=models.F("uses_left") - 1
            )
        )
