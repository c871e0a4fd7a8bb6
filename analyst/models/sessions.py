"""A session, the conversation it holds, and the turns that extend it."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models


class Privacy(models.TextChoices):
    FULL = "full"
    SCHEMA = "schema"


class Approval(models.TextChoices):
    OFF = "off"
    ALL = "all"  # every cell the model writes
    WRITES = "writes"  # cells that write files or use a connection


class AnalysisSession(models.Model):
    Privacy = Privacy
    Approval = Approval

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sessions")
    # Where it lives (its members' roles say who may read and work in it); null: its owner's
    # personal workspace.
    workspace = models.ForeignKey(
        "analyst.Workspace", on_delete=models.CASCADE, null=True, blank=True, related_name="sessions"
    )
    title = models.CharField(max_length=200, default="Untitled analysis")
    model = models.CharField(max_length=200)
    sandbox_id = models.CharField(max_length=64, blank=True, default="")
    # The sandboxd host that sandbox is on (a base URL from SANDBOXD_HOSTS); "" is SANDBOXD_URL.
    sandbox_host = models.CharField(max_length=300, blank=True, default="")
    # The seq the next event gets; bumped in the same transaction that stores the event.
    next_seq = models.PositiveBigIntegerField(default=1)
    # A branch: the session it was made from (an edited question), and the seq of that question's
    # user_message there; the original lists its branches at that question.
    branched_from = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="branches"
    )
    branched_at = models.PositiveBigIntegerField(null=True, blank=True)
    # What of the data the model may see (analyst.trust.privacy): FULL, or SCHEMA (names, types,
    # counts and aggregates, never row values); chart images only while send_chart_images.
    privacy = models.CharField(max_length=8, choices=Privacy.choices, default=Privacy.FULL)
    send_chart_images = models.BooleanField(default=True)
    # Which of the model's cells wait for a person's Run or Reject before they run.
    approve_cells = models.CharField(max_length=8, choices=Approval.choices, default=Approval.OFF)
    # The code of the cell the owner marked as the analysis's parameters cell (papermill's
    # "parameters" tag): a run's values are set right after it. "" when none is marked.
    parameters_cell = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]

    def __str__(self) -> str:
        return self.title


class Message(models.Model):
    """One entry of the model's view of the conversation, as provider-neutral parts (JSON)."""

    class Role(models.TextChoices):
        USER = "user"
        ASSISTANT = "assistant"

    session = models.ForeignKey(AnalysisSession, on_delete=models.CASCADE, related_name="messages")
    turn = models.ForeignKey("Turn", on_delete=models.CASCADE, related_name="messages", null=True)
    role = models.CharField(max_length=16, choices=Role.choices)
    parts = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]


class Turn(models.Model):
    """One unit of work: a question for the model, a code cell run directly, a restart of the
    kernel, or a replay (cells run again in order: analyst.sessions.replays; its input is their JSON)."""

    class Kind(models.TextChoices):
        CHAT = "chat"
        CELL = "cell"
        RESTART = "restart"
        REPLAY = "replay"

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"
        CANCELLED = "cancelled"

    FINISHED = (Status.DONE, Status.FAILED, Status.CANCELLED)

    session = models.ForeignKey(AnalysisSession, on_delete=models.CASCADE, related_name="turns")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    kind = models.CharField(max_length=8, choices=Kind.choices)
    input = models.TextField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    cancel_requested = models.BooleanField(default=False)
    # Set while its worker snapshots the kernel after the turn's work: the next turn may queue.
    saving = models.BooleanField(default=False)
    # A running turn's worker renews this; a turn whose lease lapsed lost its worker.
    lease_expires_at = models.DateTimeField(null=True)
    error = models.TextField(blank=True, default="")
    # A question asked again (Regenerate): the turn whose answer this one replaces. That turn's
    # events stay in the log; its messages leave the model's history when this one runs.
    regenerates = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="regenerations"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # When the broker last took this turn's task; None until it did (the broker was down). The
    # row is the truth: the reconciler enqueues again a queued turn whose message got lost.
    enqueued_at = models.DateTimeField(null=True)
    started_at = models.DateTimeField(null=True)
    finished_at = models.DateTimeField(null=True)

    class Meta:
        ordering = ["id"]
