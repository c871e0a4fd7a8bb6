"""Where a session's data lives besides its uploads: databases, object stores and HTTP APIs a user
connects, the sessions each is attached to, and a session's own secret environment variables.
Secrets are stored sealed (analyst/connections/sealing.py), never in the clear."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from analyst.models.sessions import AnalysisSession


class Connection(models.Model):
    class Kind(models.TextChoices):
        POSTGRES = "postgres"
        MYSQL = "mysql"  # MySQL and MariaDB
        SQLITE = "sqlite"  # a database file, uploaded with the connection
        DUCKDB = "duckdb"
        S3 = "s3"  # any S3-compatible store
        HTTP = "http"  # a base URL whose requests carry the secret in a header

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="connections")
    # The workspace whose admins manage it; null: its owner's personal workspace.
    workspace = models.ForeignKey(
        "analyst.Workspace", on_delete=models.CASCADE, null=True, blank=True, related_name="connections"
    )
    name = models.CharField(max_length=63)  # an identifier: connection("name"), %%sql name
    kind = models.CharField(max_length=16, choices=Kind.choices)
    url = models.CharField(max_length=2000, blank=True, default="")  # never with the secret in it
    # Per kind: s3 {"bucket", "prefix", "key_id", "region"}; http {"header", "scheme"}.
    options = models.JSONField(default=dict, blank=True)
    read_only = models.BooleanField(default=True)
    secret_sealed = models.TextField(blank=True, default="")
    file = models.FileField(upload_to="connections/", blank=True, default="")  # sqlite, duckdb
    # What the last test or attach found: {"tables": [{"name", "columns": [{"name", "type"}]}]}.
    schema = models.JSONField(default=dict, blank=True)
    # The data dictionary of its tables, as a file's: {"tables": {"<table>": {"text", "columns": {…}}}}
    dictionary = models.JSONField(default=dict, blank=True)
    # The last test's outcome: {"ok", "category", "message", "at"}.
    checked = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            # A user's own connections have names of their own; a workspace's, names in the workspace.
            models.UniqueConstraint(
                fields=["owner", "name"],
                condition=Q(workspace__isnull=True),
                name="connection_name_per_owner",
            ),
            models.UniqueConstraint(
                fields=["workspace", "name"],
                condition=Q(workspace__isnull=False),
                name="connection_name_per_workspace",
            ),
        ]
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind})"


class SessionConnection(models.Model):
    """A connection a session's kernel may use."""

    session = models.ForeignKey(AnalysisSession, on_delete=models.CASCADE, related_name="attachments")
    connection = models.ForeignKey(Connection, on_delete=models.CASCADE, related_name="attachments")
    attached_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["session", "connection"], name="connection_attached_once")
        ]
        ordering = ["attached_at", "id"]


class SessionSecret(models.Model):
    """An environment variable a session's kernel gets (an API key for a library), kept from every
    output as a connection's secret is."""

    session = models.ForeignKey(AnalysisSession, on_delete=models.CASCADE, related_name="secrets")
    name = models.CharField(max_length=128)  # an environment variable's name
    value_sealed = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["session", "name"], name="session_secret_name")]
        ordering = ["name"]
