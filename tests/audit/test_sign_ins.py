"""Sign-ins and failed ones, in the log of the account's personal workspace; the address is
REMOTE_ADDR, or behind a proxy of ours (ANALYST_TRUSTED_PROXY_HEADER) the entry that proxy added."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from analyst.lib.redis import redis_client
from tests.audit.conftest import only, recorded

pytestmark = pytest.mark.django_db
PASSWORD = "correct horse battery staple"


@pytest.fixture(autouse=True)
def login_counters_of_our_own(settings: Any) -> Iterator[None]:
    """The login throttle counts in Redis, which test runs share: keys of this test alone, removed
    after; and a quick password hasher."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # for tests only
    prefix = settings.ANALYST_REDIS_PREFIX = f"test-audit-{uuid.uuid4().hex}"
    yield
    client = redis_client(settings.REDIS_URL)
    for key in client.scan_iter(match=f"{prefix}:*"):
        client.delete(key)


@pytest.fixture
def bob(db: None) -> Any:
    return get_user_model().objects.create_user("bob", password=PASSWORD)


def sign_in(password: str, **extra: str) -> Any:
    return Client(**extra).post("/accounts/login/", {"username": "bob", "password": password})


def test_a_sign_in(bob: Any):
    assert sign_in(PASSWORD, REMOTE_ADDR="127.0.0.21").status_code == 302
    entry = only("sign_in")
    assert (entry.user_id, entry.username, entry.address) == (bob.id, "bob", "127.0.0.21")
    assert entry.workspace == bob.personal_workspace and entry.target == f"user:{bob.id}"
    assert recorded("sign_in_failed") == []


def test_a_failed_sign_in_names_whom_it_tried_but_no_one_did_it(bob: Any):
    assert sign_in("wrong password", REMOTE_ADDR="127.0.0.22").status_code == 200
    entry = only("sign_in_failed")
    assert (entry.user_id, entry.username, entry.address) == (None, "", "127.0.0.22")
    assert entry.workspace == bob.personal_workspace and entry.detail == {"username": "bob"}
    assert recorded("sign_in") == []


def test_a_name_no_account_has_goes_in_no_workspace(db: None):
    Client().post("/accounts/login/", {"username": "nobody", "password": "x" * 12})
    entry = only("sign_in_failed")
    assert (entry.workspace, entry.target, entry.detail) == (None, "", {"username": "nobody"})


def test_behind_our_proxy_the_entry_it_added_counts(bob: Any, settings: Any):
    settings.ANALYST_TRUSTED_PROXY_HEADER = "X-Forwarded-For"
    sign_in(PASSWORD, REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="10.9.9.9, 127.0.0.33")
    assert only("sign_in").address == "127.0.0.33"  # the first entry is the client's to forge


def test_without_a_proxy_the_header_is_not_believed(bob: Any):
    sign_in(PASSWORD, REMOTE_ADDR="127.0.0.44", HTTP_X_FORWARDED_FOR="10.9.9.9")
    assert only("sign_in").address == "127.0.0.44"
