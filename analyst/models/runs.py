"""Runs of a session's analysis with given parameters, each in a session of its own; the schedules
that start them, and the published report that shows the latest."""

from __future__ import annotations

import secrets
import uuid

from django.conf import settings
from django.db import models
from django.db.models.signals import post_delete
from django.dispatch import receiver
from django_celery_beat.models import PeriodicTask

from analyst.models.sessions import AnalysisSession, Turn


def new_secret() -> str:
    return secrets.token_urlsafe(32)


class Schedule(models.Model):
    """Runs of ``session``'s analysis at the times ``cron`` names in ``timezone``, with
    ``parameters`` (relative dates resolved at each run), through Celery beat's ``periodic_task``."""

    session = models.ForeignKey(AnalysisSession, on_delete=models.CASCADE, related_name="schedules")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="schedules")
    cron = models.CharField(max_length=120)  # minute hour day-of-month month day-of-week
    timezone = models.CharField(max_length=64, default="UTC")
    parameters = models.JSONField(default=dict, blank=True)
    paused = models.BooleanField(default=False)
    # A failed run is tried again this many times before it is reported (None: the setting).
    retries = models.PositiveSmallIntegerField(null=True, blank=True)
    notify_emails = models.JSONField(default=list, blank=True)
    webhook_url = models.URLField(max_length=2000, blank=True, default="")
    webhook_secret = models.CharField(max_length=64, default=new_secret)  # signs each webhook's body
    # Named so as not to hide PeriodicTask.schedule, which beat reads (its crontab).
    periodic_task = models.OneToOneField(
        PeriodicTask, on_delete=models.SET_NULL, null=True, blank=True, related_name="analyst_schedule"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]


@receiver(post_delete, sender=Schedule)
def _stop_beat_task(sender: type[Schedule], instance: Schedule, **kwargs: object) -> None:
    """A schedule deleted (with its session too): beat sends its task no more."""
    PeriodicTask.objects.filter(id=instance.periodic_task_id).delete()


class Run(models.Model):
    """The analysis of ``source`` replayed in ``session`` (a new session, not listed among the
    owner's, which holds the run's files and events) by ``turn``, with ``parameters`` injected."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    source = models.ForeignKey(AnalysisSession, on_delete=models.CASCADE, related_name="runs")
    session = models.OneToOneField(AnalysisSession, on_delete=models.CASCADE, related_name="as_run")
    turn = models.OneToOneField(Turn, on_delete=models.CASCADE, related_name="run")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    # The values given, after relative dates were resolved; the files given, by path: upload id.
    parameters = models.JSONField(default=dict, blank=True)
    files = models.JSONField(default=dict, blank=True)
    # A scheduled run: its schedule, the due time it is for (one run per due time, however often
    # beat sends it), and which try of that due time it is (failed runs are tried again).
    schedule = models.ForeignKey(
        Schedule, on_delete=models.SET_NULL, null=True, blank=True, related_name="runs"
    )
    due_at = models.DateTimeField(null=True, blank=True)
    attempt = models.PositiveSmallIntegerField(default=1)
    # Once it ended, its end is reported (a failed scheduled run tried again, or its notifications
    # sent) by one task: when that task was last sent (the reconciler's claim), and whether one
    # took it up (never twice).
    report_sent_at = models.DateTimeField(null=True, blank=True)
    reported = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["schedule", "due_at", "attempt"], name="one_run_per_due_time_and_try"
            )
        ]


class Publication(models.Model):
    """``session``'s report published at /r/<token>: the latest done run's, with the earlier
    runs as its versions (the session's own report until a run is done)."""

    session = models.OneToOneField(AnalysisSession, on_delete=models.CASCADE, related_name="publication")
    token = models.CharField(max_length=64, unique=True, default=new_secret)
    sign_in_required = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
