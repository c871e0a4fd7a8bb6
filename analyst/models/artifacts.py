"""Large rich results (PNG, HTML, plotly JSON) kept in storage and referenced from events."""

from __future__ import annotations

import uuid

from django.db import models

from analyst.models.sessions import AnalysisSession


def artifact_path(artifact: Artifact, filename: str) -> str:
    return f"artifacts/{artifact.session_id}/{artifact.id}{filename[filename.rfind('.') :]}"


class Artifact(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    session = models.ForeignKey(AnalysisSession, on_delete=models.CASCADE, related_name="artifacts")
    mime_type = models.CharField(max_length=100)
    file = models.FileField(upload_to=artifact_path)
    size = models.PositiveBigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)
