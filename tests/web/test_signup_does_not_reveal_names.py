"""Signing up never says which usernames exist (issue 24 item 14): a taken name and a free one get
the same answer, an account is made only for the free one, and the person who chose a taken name
learns it from the login that follows (throttled, as every signup is)."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from analyst.lib.redis import redis_client
from analyst.models import Invite

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-passphrase"
THEIRS = "alices-own-passphrase"
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="[^"]+"')


@pytest.fixture(autouse=True)
def throttle(settings: Any) -> Iterator[None]:
    """Redis keys of this test alone (test runs share one Redis), emptied after."""
    settings.ANALYST_LOGIN_FAILURES = 3
    settings.ANALYST_LOGIN_ADDRESS_FAILURES = 6
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast, for tests only
    prefix = settings.ANALYST_REDIS_PREFIX = f"test-signup-{uuid.uuid4().hex}"
    yield
    client = redis_client(settings.REDIS_URL)
    for key in client.scan_iter(match=f"{prefix}:*"):
        client.delete(key)


@pytest.fixture
def alice():
    return get_user_model().objects.create_user("alice", password=THEIRS)


def sign_up(username: str, address: str, **extra: str) -> tuple[Client, Any]:
    """A fresh browser's signup as a person does it: the page (for its CSRF cookie), then the form."""
    client = Client(enforce_csrf_checks=True)
    token = client.get("/accounts/signup/").cookies["csrftoken"].value
    data = {"username": username, "password1": PASSWORD, "password2": PASSWORD, "csrfmiddlewaretoken": token}
    return client, client.post("/accounts/signup/", {**data, **extra}, REMOTE_ADDR=address)


def shape(response: Any, username: str) -> tuple[int, list[tuple[str, str]], str]:
    """What an observer sees, apart from the CSRF token and the echoed username."""
    headers = sorted((k, v) for k, v in response.items() if k.lower() not in ("set-cookie", "content-length"))
    body = CSRF.sub("CSRF", response.content.decode()).replace(username, "NAME")
    return response.status_code, headers + sorted(("cookie", c) for c in response.cookies), body


@pytest.mark.parametrize("taken", ["alice", "Alice", "ALICE"])
def test_a_taken_name_gets_the_answer_a_free_one_gets_and_no_account(alice, taken):
    _, free = sign_up("zoltan-q", "10.0.0.1")
    _, refused = sign_up(taken, "10.0.0.2")
    assert shape(refused, taken) == shape(free, "zoltan-q")
    assert "already exists" not in refused.content.decode()
    users = get_user_model().objects
    assert list(users.filter(username__iexact="alice").values_list("username", flat=True)) == ["alice"]
    assert users.get(username="alice").check_password(THEIRS), "alice's account is untouched"
    assert users.filter(username="zoltan-q").exists()


def test_a_free_name_is_logged_in_from_the_page_it_gets():
    client, answer = sign_up("zed", "10.0.0.1", next="/sessions/")
    page = answer.content.decode()
    assert answer.status_code == 200 and 'data-testid="signup-done"' in page
    assert 'name="username" value="zed"' in page and 'name="signed_up" value="1"' in page
    token = client.cookies["csrftoken"].value
    login = client.post(
        "/accounts/login/",
        {
            "username": "zed",
            "password": PASSWORD,
            "signed_up": "1",
            "next": "/sessions/",
            "csrfmiddlewaretoken": token,
        },
        REMOTE_ADDR="10.0.0.1",
    )
    assert login.status_code == 302 and login["Location"] == "/sessions/"
    assert client.get("/sessions/").status_code == 200


def test_whoever_chose_a_taken_name_learns_it_at_login_and_is_told_what_to_do(alice):
    client, _ = sign_up("alice", "10.0.0.2")
    token = client.cookies["csrftoken"].value
    login = client.post(
        "/accounts/login/",
        {"username": "alice", "password": PASSWORD, "signed_up": "1", "csrfmiddlewaretoken": token},
        REMOTE_ADDR="10.0.0.2",
    )
    page = login.content.decode()
    assert login.status_code == 200 and 'data-testid="signup-name-taken"' in page
    assert "already someone else" in page and 'href="/accounts/signup/"' in page
    assert client.get("/sessions/").status_code == 302, "not logged in"


def test_signups_are_throttled_alike_for_taken_and_free_names(alice):
    # The address's budget (6) is shared by signups and failed logins, whatever the names.
    for number in range(6):
        _, answer = sign_up(f"user{number}" if number % 2 else "alice", "10.0.0.3")
        assert answer.status_code == 200
    _, free = sign_up("newcomer", "10.0.0.3")
    _, taken = sign_up("alice", "10.0.0.3")
    assert shape(free, "newcomer") == shape(taken, "alice")
    assert free.status_code == 429 and "Try again in" in free.content.decode()
    assert not get_user_model().objects.filter(username="newcomer").exists()


def test_an_invite_is_not_spent_on_a_taken_name(alice, settings):
    settings.ANALYST_SIGNUP = "invite"
    _, code = Invite.issue(uses=1)
    _, taken = sign_up("alice", "10.0.0.4", invite=code)
    assert taken.status_code == 200 and 'data-testid="signup-done"' in taken.content.decode()
    _, answer = sign_up("zed", "10.0.0.4", invite=code)
    assert answer.status_code == 200 and get_user_model().objects.filter(username="zed").exists()
    assert not Invite.is_usable(code)
