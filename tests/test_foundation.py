"""The Django project itself: settings from the environment, migrations, the liveness check
(/healthz, which checks every part, is tests/ops/test_healthz.py)."""

import pytest
from django.core.management import call_command

from config.env import envbytes


@pytest.mark.django_db
def test_liveness_check(client):
    response = client.get("/livez")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_home_page_leads_to_the_login(client):
    response = client.get("/", follow=True)
    assert response.redirect_chain == [("/accounts/login/", 302)]
    assert response.status_code == 200 and b"Log in" in response.content


@pytest.mark.django_db
def test_migrations_match_the_models():
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


def test_system_checks_pass():
    call_command("check")


@pytest.mark.parametrize(
    ("raw", "expected"), [("2G", 2 << 30), ("512M", 512 << 20), ("64k", 64 << 10), ("1000", 1000), ("", 7)]
)
def test_sizes_from_the_environment(monkeypatch, raw, expected):
    monkeypatch.setenv("SIZE", raw)
    assert envbytes("SIZE", 7) == expected
