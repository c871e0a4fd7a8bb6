"""A callback whose state is not the one this browser's sign-in started, an ID token whose nonce is
not its sign-in's, or a PKCE verifier that does not match: each gets a page that says so (never a
500), and no one is signed in."""

import re

from django.contrib.auth import get_user_model
from django.test import Client


def signed_out(client: Client) -> bool:
    return client.get("/sessions/").status_code == 302


def test_a_tampered_state_is_refused(provider, sign_in):
    provider.set_user("ada", email="ada@example.com", groups=[])
    client = Client()

    answer = sign_in(client, "ada", tamper_callback=lambda url: re.sub(r"state=[^&]+", "state=forged", url))

    assert answer.status_code == 400
    assert b"could not be verified" in answer.content
    assert signed_out(client) and not get_user_model().objects.filter(username="ada").exists()


def test_an_id_token_with_another_nonce_is_refused(provider, sign_in):
    provider.set_user("ada", email="ada@example.com", groups=[])
    client = Client()

    # The provider is asked for an ID token carrying another nonce than this sign-in's.
    answer = sign_in(client, "ada", tamper=lambda url: re.sub(r"nonce=[^&]+", "nonce=forged", url))

    assert answer.status_code == 400
    assert b"could not be verified" in answer.content
    assert signed_out(client) and not get_user_model().objects.filter(username="ada").exists()


def test_a_wrong_pkce_verifier_is_refused_by_the_provider(provider, sign_in):
    provider.set_user("ada", email="ada@example.com", groups=[])
    client = Client()

    def forge_verifier(url: str) -> str:
        session = client.session
        for entry in session["oidc_states"].values():
            entry["code_verifier"] = "v" * 64
        session.save()
        return url

    answer = sign_in(client, "ada", tamper_callback=forge_verifier)

    assert answer.status_code == 403
    assert b"the provider refused it" in answer.content
    assert signed_out(client)


def test_the_sign_in_asks_for_a_pkce_challenge_and_a_nonce(provider):
    location = Client().get("/oidc/authenticate/")["Location"]
    assert location.startswith(provider.issuer + "/authorize/?")
    assert "code_challenge_method=S256" in location and "code_challenge=" in location
    assert "nonce=" in location and "state=" in location
