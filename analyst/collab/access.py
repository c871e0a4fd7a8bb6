"""A member removed from a workspace, or given a lower role, by any path (the API, single
sign-on's groups, an account deleted): once the change commits, their open pages of its sessions
are told (each socket checks again whether it may still read its session, and closes if not), and
their notifications of sessions they may no longer read are deleted."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from analyst.collab import live, notifications
from analyst.models import Membership


def do_recheck(user: AbstractBaseUser) -> None:
    notifications.do_forget_unreadable(user)
    live.send_to_user(user.pk, live.access_message())
    live.send_to_user(user.pk, live.notifications_message(notifications.unread_count(user)))


@receiver(post_save, sender=Membership)
@receiver(post_delete, sender=Membership)
def _membership_changed(sender: type[Membership], instance: Membership, **kwargs: object) -> None:
    user_id = instance.user_id
    transaction.on_commit(lambda: _recheck(user_id))


def _recheck(user_id: object) -> None:
    user = get_user_model().objects.filter(pk=user_id).first()
    if user is not None:  # else the account went with its memberships: nothing left to tell
        do_recheck(user)
