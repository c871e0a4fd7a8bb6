"""A user deactivated in the app is signed out at their next request (their session asks the
single sign-on backend for them) and refused at a sign-in; one the provider no longer lets in
cannot sign in again."""

from django.contrib.auth import get_user_model
from django.test import Client

from tests.sso.conftest import through_provider


def test_a_user_deactivated_here_is_signed_out_at_the_next_request(provider, sign_in):
    provider.set_user("ada", email="ada@example.com", groups=[])
    client = Client()
    sign_in(client, "ada")
    assert client.get("/sessions/").status_code == 200

    get_user_model().objects.filter(username="ada").update(is_active=False)

    answer = client.get("/sessions/")
    assert answer.status_code == 302 and answer["Location"].startswith("/accounts/login/")


def test_a_user_deactivated_here_cannot_sign_in_again(provider, sign_in):
    provider.set_user("ada", email="ada@example.com", groups=[])
    sign_in(Client(), "ada")
    get_user_model().objects.filter(username="ada").update(is_active=False)

    client = Client()
    answer = sign_in(client, "ada")

    assert answer.status_code == 403
    assert b"this account is deactivated" in answer.content
    assert client.get("/sessions/").status_code == 302


def test_a_user_the_provider_no_longer_knows_is_refused_at_the_next_sign_in(provider, sign_in):
    provider.set_user("ada", email="ada@example.com", groups=[])
    sign_in(Client(), "ada")
    provider.set_user("ada", email="ada@example.com", groups=[], active=False)

    client = Client()
    start = client.get("/oidc/authenticate/")
    assert through_provider(start["Location"], username="ada", password=provider.password) is None
    assert client.get("/sessions/").status_code == 302
