"""Data files a user uploaded into a session's sandbox."""

from __future__ import annotations

from django.db import models

from analyst.models.sessions import AnalysisSession


class DataFile(models.Model):
    session = models.ForeignKey(AnalysisSession, on_delete=models.CASCADE, related_name="files")
    name = models.CharField(max_length=255)
    path = models.CharField(max_length=500)  # relative to the sandbox's workdir
    size = models.PositiveBigIntegerField()
    rows = models.PositiveBigIntegerField(null=True)
    columns = models.PositiveIntegerField(null=True)
    summary = models.TextField(blank=True, default="")  # what the model is told about it
    # Our copy, so a fresh sandbox (the old one expired) gets the file again.
    stored = models.FileField(upload_to="uploads/%Y/%m/")
    uploaded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["uploaded_at"]
        constraints = [models.UniqueConstraint(fields=["session", "path"], name="datafile_path_unique")]
