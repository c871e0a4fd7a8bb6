"""The provider's endpoints come from its discovery document, fetched once per process; a provider
that cannot be reached gets a page that says so."""

from django.test import Client

from analyst.accounts.oidc_discovery import provider_configuration
from tests.sandboxd_process import free_port


def test_discovery_is_fetched_once(provider, sign_in):
    provider.set_user("ada", email="ada@example.com", groups=[])
    provider_configuration.cache_clear()
    before = provider.discovery_fetches()

    sign_in(Client(), "ada")
    sign_in(Client(), "ada")

    assert provider.discovery_fetches() - before == 1


def test_an_unreachable_provider_gets_a_clear_page(provider, settings):
    settings.ANALYST_OIDC_ISSUER = f"http://127.0.0.1:{free_port()}/o"  # nothing listens there

    answer = Client().get("/oidc/authenticate/")

    assert answer.status_code == 502
    assert b"could not be reached" in answer.content
