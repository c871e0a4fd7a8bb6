"""One row per model call: which model, how many tokens it read and wrote, for whom."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from analyst.models.sessions import AnalysisSession, Turn


class ModelCall(models.Model):
    """A model's answer within a turn; token counts are None when the provider did not say."""

    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="model_calls")
    session = models.ForeignKey(AnalysisSession, on_delete=models.CASCADE, related_name="model_calls")
    # Whose budget the call counts against: the person who asked, not the session's owner.
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="model_calls")
    model = models.CharField(max_length=200)
    input_tokens = models.PositiveIntegerField(null=True)
    output_tokens = models.PositiveIntegerField(null=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["user", "created_at"], name="model_call_user_day")]
