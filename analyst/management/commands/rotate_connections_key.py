"""`python manage.py rotate_connections_key`: seal every connection's secret and every session's
secret variable again with the first of ANALYST_CONNECTIONS_KEY's keys, so the older keys after it
can be dropped."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.db.models import QuerySet

from analyst.connections import sealing
from analyst.models import Connection, SessionSecret


class Command(BaseCommand):
    help = (
        "Seal every stored secret again with the first key of ANALYST_CONNECTIONS_KEY (put the new"
        " key first, keep the old ones after it, run this, then drop the old ones)."
    )

    def handle(self, *args: object, **options: object) -> None:
        try:
            with transaction.atomic():
                connections = _reseal(Connection.objects.exclude(secret_sealed=""), "secret_sealed")
                secrets = _reseal(SessionSecret.objects.all(), "value_sealed")
        except sealing.SealBroken as exc:
            raise CommandError(f"{exc}: keep the key it was sealed with in ANALYST_CONNECTIONS_KEY") from None
        self.stdout.write(f"resealed {connections} connection secrets and {secrets} session secrets")


def _reseal(rows: QuerySet[Any], field: str) -> int:
    count = 0
    for row in rows.select_for_update():
        setattr(row, field, sealing.reseal(getattr(row, field)))
        row.save(update_fields=[field])
        count += 1
    return count
