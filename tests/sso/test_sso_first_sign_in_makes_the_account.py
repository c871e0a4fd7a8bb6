"""A first sign-in through the provider makes the account (named from the claims, unique), signs
it in where it was going, and fires Django's user_logged_in (where the audit log records it)."""

from django.contrib.auth import get_user_model, user_logged_in
from django.test import Client

from analyst.models.workspaces import Membership


def test_a_first_sign_in_makes_the_account_and_signs_it_in(provider, sign_in):
    provider.set_user("ada", email="Ada@example.com", groups=[])
    signed_in = []
    user_logged_in.connect(receiver := lambda sender, user, **_: signed_in.append(user), weak=False)
    try:
        client = Client()
        answer = sign_in(client, "ada", next_url="/settings/tokens/")
    finally:
        user_logged_in.disconnect(receiver)

    assert answer.status_code == 302 and answer["Location"] == "/settings/tokens/"
    ada = get_user_model().objects.get(username="ada")
    assert ada.email == "Ada@example.com" and not ada.has_usable_password()
    assert signed_in == [ada]
    assert client.get("/sessions/").status_code == 200
    assert Membership.objects.filter(user=ada, workspace__personal_of=ada, role="owner").exists()


def test_the_same_person_signs_in_to_the_same_account(provider, sign_in):
    provider.set_user("ada", email="ada@example.com", groups=[])
    sign_in(Client(), "ada")
    sign_in(Client(), "ada")
    assert list(get_user_model().objects.values_list("username", flat=True)) == ["ada"]


def test_a_taken_username_gets_a_number(provider, sign_in):
    get_user_model().objects.create_user("ada", email="another-ada@example.com", password="a-long-passphrase")
    get_user_model().objects.create_user("Ada-2", email="a-third@example.com")
    provider.set_user("ada", email="ada@example.com", groups=[])

    sign_in(Client(), "ada")

    assert get_user_model().objects.get(email="ada@example.com").username == "ada-3"


def test_the_sign_in_button_shows_only_when_configured(provider, settings):
    page = Client().get("/accounts/login/?next=/sessions/")
    assert b"Sign in with Acme ID" in page.content
    assert b'href="/oidc/authenticate/?next=/sessions/"' in page.content

    settings.ANALYST_OIDC_ISSUER = settings.ANALYST_OIDC_CLIENT_ID = ""
    assert b"Sign in with" not in Client().get("/accounts/login/").content
    assert Client().get("/oidc/authenticate/").status_code == 404
