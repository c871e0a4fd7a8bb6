"""A workspace membership removed or changed, by any path (the API, the pages, single sign-on's
group roles): the member's schedules there that they may no longer keep stop, once it is saved."""

from __future__ import annotations

from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from analyst.models import Membership
from analyst.runs import schedules


@receiver(post_save, sender=Membership)
@receiver(post_delete, sender=Membership)
def _stop_schedules(sender: type[Membership], instance: Membership, **kwargs: object) -> None:
    # After the commit: a membership deleted with its user goes with their schedules, and there is
    # then nothing left to stop (nor a session to say it in).
    user_id, workspace_id = instance.user_id, instance.workspace_id
    transaction.on_commit(lambda: schedules.stop_schedules_of(user_id=user_id, workspace_id=workspace_id))
