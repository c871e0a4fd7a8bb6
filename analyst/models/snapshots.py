from __future__ import annotations

from django.db import models

from analyst.models.sessions import AnalysisSession, Turn


class KernelSnapshot(models.Model):
    """A sandboxd snapshot of a session's kernel (variables and files), newest last.

    A fork shares its source's snapshot id; sandboxd's copy goes once no row names it.
    """

    session = models.ForeignKey(AnalysisSession, on_delete=models.CASCADE, related_name="snapshots")
    turn = models.ForeignKey(Turn, on_delete=models.SET_NULL, null=True, related_name="+")
    snapshot_id = models.CharField(max_length=64, db_index=True)
    # The sandboxd host that took it ("" is SANDBOXD_URL): with local stores, the only one that has it.
    host = models.CharField(max_length=300, blank=True, default="")
    size = models.PositiveBigIntegerField()
    unsaved = models.JSONField(default=list)  # variables that could not be kept
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["session", "id"]
