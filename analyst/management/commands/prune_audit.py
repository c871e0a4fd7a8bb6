"""`python manage.py prune_audit [--days N]`: delete audit entries older than ANALYST_AUDIT_DAYS
(or N days); Celery beat does the same daily."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from analyst.audit import pruning


class Command(BaseCommand):
    help = "Delete audit log entries older than ANALYST_AUDIT_DAYS (or --days)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--days", type=int, default=None, help="keep this many days instead")

    def handle(self, *args: object, days: int | None, **options: object) -> None:
        try:
            deleted = pruning.prune(days=days)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"{deleted} audit entries deleted")
