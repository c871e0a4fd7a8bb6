"""ANALYST_SIGNUP: open (anyone signs up), invite (a code from `manage.py invite`, stored only
hashed, with uses left), closed (403, and the login page offers no signup)."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client

from analyst.lib.redis import redis_client
from analyst.models import Invite
from analyst.models.invites import hash_code
from tests.sandboxd_process import ROOT

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-passphrase"


@pytest.fixture(autouse=True)
def fast_hasher(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # for tests only


@pytest.fixture(autouse=True)
def own_throttle_keys(settings: Any) -> Iterator[None]:
    """Signups count in the login throttle: keys of this test alone (test runs share one Redis)."""
    prefix = settings.ANALYST_REDIS_PREFIX = f"test-signup-modes-{uuid.uuid4().hex}"
    yield
    client = redis_client(settings.REDIS_URL)
    for key in client.scan_iter(match=f"{prefix}:*"):
        client.delete(key)


def signed_up(response: Any) -> bool:
    """The answer to a valid signup (whether or not the name was free): a page asking to log in."""
    return response.status_code == 200 and 'data-testid="signup-done"' in response.content.decode()


def invite(*options: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("invite", *options, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def sign_up(username: str, code: str | None = None, client: Client | None = None) -> Any:
    data = {"username": username, "password1": PASSWORD, "password2": PASSWORD}
    if code is not None:
        data["invite"] = code
    return (client or Client()).post("/accounts/signup/", data)


def accounts() -> list[str]:
    return sorted(get_user_model().objects.values_list("username", flat=True))


def test_open_by_default_asks_no_code_and_the_login_page_links_to_signup(settings):
    assert settings.ANALYST_SIGNUP == "open"
    assert 'name="invite"' not in Client().get("/accounts/signup/").content.decode()
    assert 'href="/accounts/signup/"' in Client().get("/accounts/login/").content.decode()
    assert signed_up(sign_up("bob")) and accounts() == ["bob"]


def test_closed_refuses_the_page_and_the_post_and_hides_the_link(settings):
    settings.ANALYST_SIGNUP = "closed"
    page = Client().get("/accounts/signup/")
    assert page.status_code == 403 and "Signups are closed" in page.content.decode()
    assert 'name="password1"' not in page.content.decode()
    assert sign_up("bob").status_code == 403 and accounts() == []
    login = Client().get("/accounts/login/")
    assert login.status_code == 200 and "/accounts/signup/" not in login.content.decode()


def test_an_unknown_setting_stops_the_app_at_start():
    run = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
        env={"PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "config.settings", "SECRET_KEY": "x",
             "ANALYST_SIGNUP": "invites"},
    )  # fmt: skip
    assert run.returncode != 0 and "ANALYST_SIGNUP is 'invites'" in run.stderr


def test_invite_only_needs_a_valid_code_and_takes_one_use_per_account(settings):
    settings.ANALYST_SIGNUP = "invite"
    code = invite()[0].strip()
    assert 'name="invite"' in Client().get("/accounts/signup/").content.decode()
    assert "Have an invite code?" in Client().get("/accounts/login/").content.decode()

    for missing in (None, "", "not-a-code"):
        response = sign_up("mallory", missing)
        assert response.status_code == 200 and accounts() == []
    assert "This invite code is not valid, or has been used up." in response.content.decode()
    weak = Client().post(
        "/accounts/signup/", {"username": "mallory", "password1": "x", "password2": "x", "invite": "nope"}
    )  # both told at once
    assert "invite code is not valid" in weak.content.decode() and "too short" in weak.content.decode()

    client = Client()
    assert signed_up(sign_up("bob", code, client=client))
    login = client.post("/accounts/login/", {"username": "bob", "password": PASSWORD, "signed_up": "1"})
    assert login.status_code == 302 and login["Location"] == "/sessions/"
    assert client.get("/sessions/").status_code == 200  # logged in
    assert "used up" in sign_up("carol", code).content.decode() and accounts() == ["bob"]


def test_a_code_for_n_uses_makes_n_accounts(settings):
    settings.ANALYST_SIGNUP = "invite"
    code = invite("--uses", "2")[0].strip()
    assert signed_up(sign_up("bob", code))
    assert signed_up(sign_up("carol", f"  {code} "))  # as pasted, with spaces
    assert "used up" in sign_up("dave", code).content.decode()
    assert accounts() == ["bob", "carol"] and Invite.objects.get().uses_left == 0


def test_a_refused_signup_keeps_its_use(settings):
    settings.ANALYST_SIGNUP = "invite"
    code = invite()[0].strip()
    get_user_model().objects.create_user("bob")
    assert signed_up(sign_up("bob", code))  # the username is taken, which the answer does not say
    assert Invite.objects.get().uses_left == 1
    assert signed_up(sign_up("carol", code)) and accounts() == ["bob", "carol"]


def test_the_signup_link_fills_in_the_code(settings):
    settings.ANALYST_SIGNUP = "invite"
    out, err = invite()
    code = out.strip()
    link = re.search(r"http://\S+", err).group(0)
    assert link == f"{settings.ANALYST_PUBLIC_URL}/accounts/signup/?invite={code}"
    page = Client().get(link.removeprefix(settings.ANALYST_PUBLIC_URL)).content.decode()
    assert re.search(
        rf'name="invite"[^>]*value="{re.escape(code)}"|value="{re.escape(code)}"[^>]*name="invite"', page
    )
    assert "&lt;b&gt;" in Client().get("/accounts/signup/?invite=<b>").content.decode()  # escaped


def test_the_command_prints_only_the_code_and_stores_only_its_hash(settings):
    alice = get_user_model().objects.create_user("alice")
    out, err = invite("--uses", "3", "--by", "alice")
    code = out.strip()
    assert out == code + "\n" and len(code) >= 20, "stdout holds the code alone, for CODE=$(manage.py invite)"
    assert "good for 3 signups" in err and "ANALYST_SIGNUP is open" in err
    record = Invite.objects.get()
    assert (record.digest, record.uses_left, record.created_by) == (hash_code(code), 3, alice)
    assert code not in str(list(Invite.objects.values()))
    assert invite()[0].strip() != code
    with pytest.raises(CommandError):
        invite("--uses", "0")
    with pytest.raises(CommandError):
        invite("--by", "nobody")
