"""Register the app as a confidential client of the test provider: authorization code, PKCE
(the provider's PKCE_REQUIRED), RS256 ID tokens, no consent page."""

from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from oauth2_provider.models import Application


class Command(BaseCommand):
    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("client_id")
        parser.add_argument("client_secret")
        parser.add_argument("redirect_uris", help="space-separated")

    def handle(self, *args: Any, **options: Any) -> None:
        Application.objects.create(
            name="AI data analyst",
            client_id=options["client_id"],
            client_secret=options["client_secret"],
            client_type=Application.CLIENT_CONFIDENTIAL,
            authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
            redirect_uris=options["redirect_uris"],
            algorithm=Application.RS256_ALGORITHM,
            skip_authorization=True,
        )
