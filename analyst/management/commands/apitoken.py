"""`python manage.py apitoken <username>`: create the user if needed and print a new API token."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser

from analyst.models import ApiToken


class Command(BaseCommand):
    help = "Print a new API token for USERNAME (creating the user, without a password, if needed)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")

    def handle(self, *args: object, username: str, **options: object) -> None:
        user, created = get_user_model().objects.get_or_create(username=username)
        if created:
            user.set_unusable_password()
            user.save()
            self.stderr.write(f"created user {username!r} (no password; set one with changepassword)")
        _, secret = ApiToken.issue(user)
        self.stdout.write(secret)
