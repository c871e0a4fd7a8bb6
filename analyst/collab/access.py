"""A member removed from a workspace, or given a lower role: their open pages of its sessions are
told at once (each socket checks again whether it may still read its session, and closes if not),
and their notifications of sessions they may no longer read are deleted."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser

from analyst.collab import live, notifications


def do_recheck(user: AbstractBaseUser) -> None:
    notifications.do_forget_unreadable(user)
    live.send_to_user(user.pk, live.access_message())
    live.send_to_user(user.pk, live.notifications_message(notifications.unread_count(user)))
