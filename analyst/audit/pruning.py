"""The audit log keeps ANALYST_AUDIT_DAYS of entries: older ones are deleted (the only deletion
there is), by `manage.py prune_audit` and daily by Celery beat."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from analyst.models import AuditEntry


def prune(*, days: int | None = None, now: datetime | None = None) -> int:
    """Delete the entries older than ``days`` (default ANALYST_AUDIT_DAYS); how many went."""
    days = settings.ANALYST_AUDIT_DAYS if days is None else days
    if days < 1:
        raise ValueError("the audit log is kept at least one day")
    cutoff = (now or timezone.now()) - timedelta(days=days)
    deleted, _ = AuditEntry.objects.filter(created_at__lt=cutoff).delete()
    return deleted
