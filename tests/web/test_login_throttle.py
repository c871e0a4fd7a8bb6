"""Password logins are throttled per username and per client address (counters in real Redis),
answering 429 on the login page, alike for accounts that exist and ones that do not.

The attack shape is OWASP's Authentication Cheat Sheet ("Protect against automated attacks":
brute force against one account, password spraying across accounts from one address)."""

from __future__ import annotations

import concurrent.futures
import re
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from analyst.accounts import login_throttle
from analyst.lib.redis import redis_client
from tests.sandboxd_process import free_port

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-passphrase"
WRONG = "not-the-passphrase"


@pytest.fixture(autouse=True)
def throttle(settings: Any) -> Iterator[str]:
    """Small limits, and Redis keys of this test alone (test runs share one Redis), emptied after."""
    settings.ANALYST_LOGIN_FAILURES = 3
    settings.ANALYST_LOGIN_ADDRESS_FAILURES = 5
    settings.ANALYST_LOGIN_WINDOW = 60
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast, for tests only
    prefix = settings.ANALYST_REDIS_PREFIX = f"test-login-{uuid.uuid4().hex}"
    client = redis_client(settings.REDIS_URL)
    yield prefix
    for key in client.scan_iter(match=f"{prefix}:*"):
        client.delete(key)


@pytest.fixture
def alice():
    return get_user_model().objects.create_user("alice", password=PASSWORD, is_staff=True)


def log_in(username: str, password: str, address: str = "127.0.0.1", client: Client | None = None) -> Any:
    client = client or Client()
    return client.post("/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=address)


def errors(response: Any) -> list[str]:
    return re.findall(r"<li>(.*?)</li>", response.content.decode())


def test_after_n_failures_for_a_username_even_the_right_password_is_refused_with_429(alice):
    for _ in range(3):
        response = log_in("alice", WRONG)
        assert response.status_code == 200 and "correct username and password" in response.content.decode()
    client = Client()
    response = log_in("alice", PASSWORD, client=client)
    assert response.status_code == 429
    assert errors(response) == [
        "Too many failed logins for this username or from this address. Try again in 1 minute."
    ]
    assert 0 < int(response["Retry-After"]) <= 60
    assert "_auth_user_id" not in client.session
    assert log_in("Alice", WRONG).status_code == 429  # usernames count case-insensitively
    assert log_in("bob", WRONG).status_code == 200  # another username has a budget of its own


def test_a_refusal_tells_nothing_about_whether_the_account_exists(alice):
    refusals = {}
    for username in ("alice", "nobody"):
        for _ in range(3):
            log_in(username, WRONG)
        response = log_in(username, WRONG)
        refusals[username] = (response.status_code, errors(response))
    assert refusals["alice"] == refusals["nobody"]


def test_once_the_window_passes_the_account_may_log_in_again(alice, settings):
    settings.ANALYST_LOGIN_WINDOW = 2
    for _ in range(3):
        log_in("alice", WRONG)
    assert log_in("alice", PASSWORD).status_code == 429
    time.sleep(2.5)
    response = log_in("alice", PASSWORD)
    assert response.status_code == 302 and response["Location"] == "/sessions/"


def test_failures_across_usernames_from_one_address_are_refused_for_every_account(alice):
    for n in range(5):
        assert log_in(f"user{n}", WRONG, address="203.0.113.7").status_code == 200
    assert log_in("alice", PASSWORD, address="203.0.113.7").status_code == 429
    assert log_in("alice", PASSWORD, address="198.51.100.2").status_code == 302


def test_a_success_takes_back_only_its_own_attempt_from_the_address_and_clears_its_username(alice):
    for n in range(4):
        log_in(f"user{n}", WRONG, address="203.0.113.7")
    assert log_in("alice", PASSWORD, address="203.0.113.7").status_code == 302
    assert log_in("carol", WRONG, address="203.0.113.7").status_code == 200  # the 5th failure
    assert log_in("dave", WRONG, address="203.0.113.7").status_code == 429  # others' failures still count

    for _ in range(2):
        log_in("alice", WRONG)
    assert log_in("alice", PASSWORD).status_code == 302
    for _ in range(2):
        log_in("alice", WRONG)
    assert log_in("alice", PASSWORD).status_code == 302  # the earlier two no longer count


def test_the_admin_login_counts_and_is_refused_alike(alice):
    for _ in range(3):
        Client().post("/admin/login/", {"username": "alice", "password": WRONG})
    assert log_in("alice", PASSWORD).status_code == 429
    admin = Client()
    admin.post("/admin/login/", {"username": "alice", "password": PASSWORD, "next": "/admin/"})
    assert "_auth_user_id" not in admin.session


def test_parallel_guesses_get_exactly_the_limit():
    def guess(_: int) -> bool:
        return login_throttle.attempt(username="alice", address="").refused

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        refused = list(pool.map(guess, range(24)))
    assert refused.count(False) == 3


def test_only_a_trusted_proxy_header_names_the_address_and_only_its_last_entry(alice, settings):
    def fail(forwarded: str) -> int:
        return Client().post(
            "/accounts/login/", {"username": f"u{uuid.uuid4().hex}", "password": WRONG},
            REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR=forwarded,
        ).status_code  # fmt: skip

    # Without the setting the header is the client's own and changes nothing: all from 10.0.0.1.
    assert [fail(f"192.0.2.{n}") for n in range(6)] == [200] * 5 + [429]

    settings.ANALYST_TRUSTED_PROXY_HEADER = "X-Forwarded-For"
    # The proxy appends the address it saw; entries before it are forged and do not count.
    assert [fail(f"192.0.2.{n}, 203.0.113.9") for n in range(6)] == [200] * 5 + [429]
    assert fail("203.0.113.10") == 200


def test_addresses_count_ipv6_by_64_and_ipv4_mapped_as_ipv4(rf):
    def address(remote: str) -> str:
        return login_throttle.client_address(rf.get("/", REMOTE_ADDR=remote))

    assert address("2001:db8:1:2:aaaa::1") == address("2001:db8:1:2:bbbb::2") == "2001:db8:1:2::/64"
    assert address("2001:db8:1:3::1") != address("2001:db8:1:2::1")
    assert address("::ffff:203.0.113.7") == address("203.0.113.7") == "203.0.113.7"


def test_without_redis_logins_go_on(alice, settings):
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"
    assert log_in("alice", WRONG).status_code == 200
    assert log_in("alice", PASSWORD).status_code == 302
