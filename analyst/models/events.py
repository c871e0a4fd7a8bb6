"""The event log: every turn's output, in order, gap-free per session."""

from __future__ import annotations

from django.db import models

from analyst.models.sessions import AnalysisSession, Turn


class Event(models.Model):
    session = models.ForeignKey(AnalysisSession, on_delete=models.CASCADE, related_name="events")
    turn = models.ForeignKey(Turn, on_delete=models.SET_NULL, null=True, related_name="events")
    seq = models.PositiveBigIntegerField()
    type = models.CharField(max_length=32)
    payload = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["session", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["session", "seq"], name="event_seq_unique_per_session")
        ]
