"""`manage.py apitoken USER [--name NAME]`: makes the user when needed, prints only a new working
token."""

from __future__ import annotations

import os
import subprocess
import sys

from django.contrib.auth import get_user_model
from django.test import Client

from analyst.models import ApiToken
from tests.api.conftest import server_env
from tests.sandboxd_process import ROOT


def apitoken(username: str, *options: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "apitoken", username, *options],
        cwd=ROOT, env={**os.environ, **server_env()}, capture_output=True, text=True, timeout=60, check=check,
    )  # fmt: skip


def works(token: str) -> bool:
    return Client(HTTP_AUTHORIZATION=f"Bearer {token}").get("/api/sessions").status_code == 200


def test_it_creates_the_user_and_prints_a_working_token(transactional_db):
    run = apitoken("bob")
    token = run.stdout.strip()
    assert run.stdout == token + "\n", "stdout holds the token alone, for TOKEN=$(manage.py apitoken bob)"
    assert token.startswith("ada_") and len(token) > 40
    assert "created user 'bob'" in run.stderr
    bob = get_user_model().objects.get(username="bob")
    assert not bob.has_usable_password()
    record = ApiToken.objects.get()
    assert (record.user, record.name, record.prefix) == (bob, "", token[4:12])
    assert works(token)


def test_twice_gives_two_different_working_tokens_for_one_user(transactional_db):
    first, second = apitoken("bob"), apitoken("bob")
    assert "created" not in second.stderr
    tokens = [first.stdout.strip(), second.stdout.strip()]
    assert tokens[0] != tokens[1]
    assert all(works(t) for t in tokens)
    assert get_user_model().objects.filter(username="bob").count() == 1
    assert ApiToken.objects.filter(user__username="bob").count() == 2


def test_an_existing_user_keeps_their_password(transactional_db):
    get_user_model().objects.create_user("carol", password="s3cret-pass")
    assert works(apitoken("carol").stdout.strip())
    assert get_user_model().objects.get(username="carol").check_password("s3cret-pass")


def test_a_name_is_kept_trimmed_for_the_tokens_page(transactional_db):
    token = apitoken("bob", "--name", "  nightly report  ").stdout.strip()
    record = ApiToken.objects.get(user__username="bob")
    assert (record.name, record.prefix) == ("nightly report", token[4:12])
    assert works(token)


def test_a_name_too_long_is_refused_and_makes_nothing(transactional_db):
    run = apitoken("bob", "--name", "x" * 101, check=False)
    assert run.returncode != 0 and run.stdout == ""
    assert "at most 100" in run.stderr
    assert not ApiToken.objects.exists()
    assert not get_user_model().objects.filter(username="bob").exists()
