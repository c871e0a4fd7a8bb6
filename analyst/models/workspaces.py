"""Workspaces: where a team's sessions, uploads and connections live, each member with a role; the
invitations that bring people in; the comments members leave on a session's cells and answers;
and the audit log of what was read and changed. Every user has a personal workspace of their own."""

from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.db import models
from django.db.models.signals import post_save
from django.dispatch import receiver


class Role(models.TextChoices):
    OWNER = "owner"
    ADMIN = "admin"  # members, connections, settings
    EDITOR = "editor"  # create sessions, ask and run in the workspace's sessions
    VIEWER = "viewer"  # read every session live, export, fork into their own space


class Workspace(models.Model):
    name = models.CharField(max_length=100)
    # The user whose personal workspace this is (made with the account); null for a team's.
    personal_of = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="personal_workspace",
    )
    storage_limit = models.PositiveBigIntegerField(null=True, blank=True)  # bytes; None: the setting
    # Instructions its admins saved, added to the system prompt of every session in it.
    instructions = models.TextField(blank=True, default="")
    # What the model may see in every session in it: "" (each session's own choice) or "schema".
    privacy = models.CharField(max_length=8, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "id"]

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    Role = Role

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=8, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "user"], name="member_once")]
        ordering = ["created_at", "id"]


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class WorkspaceInvitation(models.Model):
    """A link (or an e-mail carrying it) that makes its holder a member with ``role`` until it
    expires; only the token's hash is stored."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="invitations")
    role = models.CharField(max_length=8, choices=Role.choices)
    email = models.EmailField(blank=True, default="")  # "" for a link handed out by hand
    digest = models.CharField(max_length=64, unique=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    accepted_at = models.DateTimeField(null=True, blank=True)

    @staticmethod
    def new_token() -> str:
        return secrets.token_urlsafe(24)


class Comment(models.Model):
    """A member's comment on one of a session's cells or answers (the event at ``seq``)."""

    session = models.ForeignKey("analyst.AnalysisSession", on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    seq = models.PositiveBigIntegerField()
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]


class Notification(models.Model):
    """News for one user about a session they take part in (a comment on it, for now), unread
    until they open it."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications")
    session = models.ForeignKey(
        "analyst.AnalysisSession", on_delete=models.CASCADE, related_name="notifications"
    )
    comment = models.ForeignKey(Comment, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    text = models.CharField(max_length=300)
    created_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["user", "read_at"], name="notifications_unread")]


class AuditEntry(models.Model):
    """One action that read or changed a workspace's data (or a sign-in): append-only, kept for
    ANALYST_AUDIT_DAYS. ``username`` stays when the user is deleted."""

    workspace = models.ForeignKey(
        Workspace, on_delete=models.CASCADE, null=True, blank=True, related_name="audit_entries"
    )
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    username = models.CharField(max_length=150, blank=True, default="")
    action = models.CharField(max_length=48)
    target = models.CharField(max_length=200, blank=True, default="")  # "session:<id>", "connection:<id>"
    detail = models.JSONField(default=dict, blank=True)
    address = models.GenericIPAddressField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["workspace", "-created_at"], name="audit_by_workspace")]


@receiver(post_save, sender=settings.AUTH_USER_MODEL)
def make_personal_workspace(
    sender: object, instance: object, created: bool, raw: bool = False, **_: object
) -> None:
    """Every account comes with its personal workspace, the account its owner."""
    if created and not raw:
        workspace = Workspace.objects.create(name="Personal", personal_of=instance)
        Membership.objects.create(workspace=workspace, user=instance, role=Role.OWNER)
