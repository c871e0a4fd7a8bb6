"""Invitations into a workspace: a link (its token shown once, only its hash stored) or an e-mail
holding that link, expiring after ANALYST_INVITATION_DAYS; accepting one makes a member."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.mail import EmailMultiAlternatives
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.html import escape

from analyst.models import Membership, Workspace, WorkspaceInvitation
from analyst.models.workspaces import Role, hash_token
from analyst.workspaces.members import Invalid, NotAMember, check_grant


class InvitationUnusable(Exception):
    """An unknown, expired or used token; ``str()`` says which in words."""


@dataclass(frozen=True)
class Issued:
    invitation: WorkspaceInvitation
    url: str  # holds the token: shown once, never stored


def accept_path(token: str) -> str:
    return f"/invitations/{token}/"


def check_email(email: object) -> str:
    if email is None or email == "":
        return ""
    if not isinstance(email, str) or "@" not in email.strip() or len(email.strip()) > 254:
        raise Invalid("'email' must be an e-mail address")
    return email.strip()


def do_invite(
    *, workspace: Workspace, by: AbstractBaseUser, role: object, email: object = None, base_url: str
) -> Issued:
    """An invitation for ``role`` (the inviter may give it: as check_grant); with an e-mail, the
    link is sent there after the transaction commits."""
    granted = check_grant(workspace=workspace, by=by, role=role)
    address = check_email(email)
    token = WorkspaceInvitation.new_token()
    invitation = WorkspaceInvitation.objects.create(
        workspace=workspace,
        role=granted,
        email=address,
        digest=hash_token(token),
        created_by=by,
        expires_at=timezone.now() + datetime.timedelta(days=settings.ANALYST_INVITATION_DAYS),
    )
    url = base_url.rstrip("/") + accept_path(token)
    if address:
        inviter = by.get_username()
        transaction.on_commit(lambda: send_email(invitation, url=url, inviter=inviter))
    return Issued(invitation, url)


def send_email(invitation: WorkspaceInvitation, *, url: str, inviter: str) -> None:
    name, days = invitation.workspace.name, settings.ANALYST_INVITATION_DAYS
    subject = f"{inviter} invites you to {name}"
    text = (
        f"{inviter} invites you to the workspace “{name}” as {invitation.role}.\n\n"
        f"Accept: {url}\n\nThe link works once, for {days} days.\n"
    )
    html = (
        f"<p>{escape(inviter)} invites you to the workspace “{escape(name)}” as {invitation.role}.</p>"
        f'<p><a href="{escape(url)}">Accept the invitation</a></p>'
        f"<p>The link works once, for {days} days.</p>"
    )
    message = EmailMultiAlternatives(subject, text, to=[invitation.email])
    message.attach_alternative(html, "text/html")
    message.send()


def pending(workspace: Workspace) -> QuerySet[WorkspaceInvitation]:
    """The workspace's invitations not accepted yet, newest first (expired ones too, marked so)."""
    return workspace.invitations.filter(accepted_at__isnull=True).order_by("-created_at", "-id")


def get_pending(workspace: Workspace, invitation_id: object) -> WorkspaceInvitation:
    try:
        return pending(workspace).get(id=int(str(invitation_id)))
    except (WorkspaceInvitation.DoesNotExist, ValueError):
        raise NotAMember("no such invitation") from None


def do_revoke(*, invitation: WorkspaceInvitation, by: AbstractBaseUser) -> WorkspaceInvitation:
    check_grant(workspace=invitation.workspace, by=by, role=invitation.role)
    invitation.delete()
    return invitation


def find(token: str) -> WorkspaceInvitation:
    """The usable invitation the token names; InvitationUnusable says why not."""
    invitation = (
        WorkspaceInvitation.objects.select_related("workspace").filter(digest=hash_token(token)).first()
    )
    if invitation is None:
        raise InvitationUnusable(
            "this invitation does not exist: it may have been revoked, or the link mistyped"
        )
    if invitation.accepted_at is not None:
        raise InvitationUnusable("this invitation has been used already: ask for a new one")
    if invitation.expires_at <= timezone.now():
        raise InvitationUnusable("this invitation has expired: ask for a new one")
    return invitation


@transaction.atomic
def do_accept(*, token: str, user: AbstractBaseUser) -> Membership:
    """The user's membership through the invitation. A member already keeps their role and
    leaves the invitation unused; otherwise the invitation is claimed once."""
    invitation = find(token)
    existing = Membership.objects.filter(workspace=invitation.workspace, user=user).first()
    if existing is not None:
        return existing
    claimed = WorkspaceInvitation.objects.filter(id=invitation.id, accepted_at__isnull=True).update(
        accepted_at=timezone.now(), accepted_by=user
    )
    if not claimed:
        raise InvitationUnusable("this invitation has been used already: ask for a new one")
    return Membership.objects.create(workspace=invitation.workspace, user=user, role=Role(invitation.role))


def as_dict(invitation: WorkspaceInvitation) -> dict[str, object]:
    return {
        "id": invitation.id,
        "role": invitation.role,
        "email": invitation.email,
        "created_at": invitation.created_at.isoformat(),
        "expires_at": invitation.expires_at.isoformat(),
        "expired": invitation.expires_at <= timezone.now(),
    }
