"""Data files a user uploaded into a session's sandbox."""

from __future__ import annotations

from django.db import models

from analyst.models.sessions import AnalysisSession


class DataFile(models.Model):
    class Placement(models.TextChoices):
        PLACING = "placing"  # stored here, on its way into the sandbox (retried while sandboxd is away)
        READY = "ready"  # in the sandbox and described
        FAILED = "failed"  # could not be placed; placement_error says why, a retry may place it

    session = models.ForeignKey(AnalysisSession, on_delete=models.CASCADE, related_name="files")
    name = models.CharField(max_length=255)
    path = models.CharField(max_length=500)  # relative to the sandbox's workdir
    size = models.PositiveBigIntegerField()
    rows = models.PositiveBigIntegerField(null=True)
    columns = models.PositiveIntegerField(null=True)
    summary = models.TextField(blank=True, default="")  # what the model is told about it
    # What the sandbox found (analyst.files.reports.checked: format, tables, detected, preview),
    # and the reading the user chose over detection (delimiter, encoding, header row, sheet).
    description = models.JSONField(default=dict, blank=True)
    read_options = models.JSONField(default=dict, blank=True)
    # Per column (by table: "" for a single table, else the sheet's name): {"<table>": {"<column>":
    # "sensitive"}} as the user confirmed; proposed: the same shape, what reading the file suggested
    # (e-mail addresses, phone numbers, IBANs, national ids), until the user confirms or dismisses.
    column_marks = models.JSONField(default=dict, blank=True)
    proposed_marks = models.JSONField(default=dict, blank=True)
    # The data dictionary: {"file": "<text>", "tables": {"<table>": {"text": "…", "columns":
    # {"<column>": "<text>"}}}}, given to the model with the schema.
    dictionary = models.JSONField(default=dict, blank=True)
    # Our copy, so a fresh sandbox (the old one expired) gets the file again.
    stored = models.FileField(upload_to="uploads/%Y/%m/")
    uploaded_at = models.DateTimeField(auto_now_add=True)
    placement = models.CharField(max_length=10, choices=Placement.choices, default=Placement.PLACING)
    placement_error = models.TextField(blank=True, default="")
    # While placing: when the broker took its task, when its retry falls due, or (a worker placing
    # it) when that attempt must be over; None until the broker took it. Overdue means lost: the
    # reconciler sends it again (see placement_queue).
    placement_due = models.DateTimeField(null=True)

    class Meta:
        ordering = ["uploaded_at"]
        constraints = [models.UniqueConstraint(fields=["session", "path"], name="datafile_path_unique")]
