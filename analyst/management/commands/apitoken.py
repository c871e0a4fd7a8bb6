"""`python manage.py apitoken <username> [--name NAME]`: create the user if needed and print a new
API token."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from analyst.accounts import api_tokens
from analyst.models import ApiToken


class Command(BaseCommand):
    help = "Print a new API token for USERNAME (creating the user, without a password, if needed)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument(
            "--name", default="", help="what the token is for, as the API tokens page lists it"
        )

    def handle(self, *args: object, username: str, name: str, **options: object) -> None:
        if name:
            try:
                name = api_tokens.check_name(name)
            except api_tokens.InvalidToken as exc:
                raise CommandError(str(exc)) from None
        user, created = get_user_model().objects.get_or_create(username=username)
        if created:
            user.set_unusable_password()
            user.save()
            self.stderr.write(f"created user {username!r} (no password; set one with changepassword)")
        _, secret = ApiToken.issue(user, name=name)
        self.stdout.write(secret)
