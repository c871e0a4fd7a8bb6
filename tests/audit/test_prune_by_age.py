"""The log keeps ANALYST_AUDIT_DAYS: `manage.py prune_audit` (and the daily task beat sends)
deletes older entries, and only those."""

from __future__ import annotations

import io
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.utils import timezone

from analyst import tasks
from analyst.audit.records import record
from analyst.models import AuditEntry, Workspace

pytestmark = pytest.mark.django_db


@pytest.fixture
def aged(alice: Any) -> dict[int, AuditEntry]:
    """Entries 400, 366, 364 and 0 days old."""
    workspace = Workspace.objects.get(personal_of=alice)
    made = {}
    for days in (400, 366, 364, 0):
        entry = record("ask", user=alice, workspace=workspace)
        AuditEntry.objects.filter(id=entry.id).update(created_at=timezone.now() - timedelta(days=days))
        made[days] = entry
    return made


def kept() -> set[int]:
    return set(AuditEntry.objects.values_list("id", flat=True))


def test_the_command_deletes_what_is_older_than_the_setting(aged: dict[int, AuditEntry], settings: Any):
    assert settings.ANALYST_AUDIT_DAYS == 365
    said = io.StringIO()
    call_command("prune_audit", stdout=said)
    assert said.getvalue().strip() == "2 audit entries deleted"
    assert kept() == {aged[364].id, aged[0].id}


def test_days_from_the_setting_or_the_command_line(aged: dict[int, AuditEntry], settings: Any):
    settings.ANALYST_AUDIT_DAYS = 380
    tasks.prune_audit_log()
    assert kept() == {aged[366].id, aged[364].id, aged[0].id}
    call_command("prune_audit", "--days", "30", stdout=io.StringIO())
    assert kept() == {aged[0].id}
    with pytest.raises(CommandError, match="at least one day"):
        call_command("prune_audit", "--days", "0")


def test_celery_beat_sends_the_task_daily():
    (entry,) = [e for e in settings.CELERY_BEAT_SCHEDULE.values() if e["task"] == tasks.prune_audit_log.name]
    assert entry["schedule"] == 24 * 3600
