"""`python manage.py invite [--uses N] [--by USERNAME]`: print a new invite code for signups when
ANALYST_SIGNUP=invite (only its hash is stored)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from analyst.models import Invite


class Command(BaseCommand):
    help = "Print a new invite code, good for N signups (1 unless --uses says otherwise)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--uses", type=int, default=1, help="how many accounts the code may make")
        parser.add_argument("--by", default="", help="the username recorded as the invite's creator")

    def handle(self, *args: object, uses: int, by: str, **options: object) -> None:
        if uses < 1:
            raise CommandError("--uses must be at least 1")
        creator = None
        if by:
            creator = get_user_model().objects.filter(username=by).first()
            if creator is None:
                raise CommandError(f"no user {by!r}")
        _, code = Invite.issue(uses=uses, created_by=creator)
        self.stdout.write(code)
        link = f"{settings.ANALYST_PUBLIC_URL}/accounts/signup/?invite={code}"
        mode = settings.ANALYST_SIGNUP
        note = (
            "" if mode == "invite" else f" (but ANALYST_SIGNUP is {mode}, so the signup page takes no code)"
        )
        self.stderr.write(f"good for {uses} signup{'s' if uses != 1 else ''}: {link}{note}")
