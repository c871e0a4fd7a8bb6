"""Make or change a user of the test provider: password, e-mail, groups, active or not."""

from typing import Any

from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand, CommandParser


class Command(BaseCommand):
    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--password", required=True)
        parser.add_argument("--email", required=True)
        parser.add_argument("--groups", default="", help="comma-separated")
        parser.add_argument("--inactive", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        user, _ = User.objects.get_or_create(username=options["username"])
        user.email = options["email"]
        user.is_active = not options["inactive"]
        user.set_password(options["password"])
        user.save()
        names = [name for name in options["groups"].split(",") if name]
        user.groups.set([Group.objects.get_or_create(name=name)[0] for name in names])
