"""The Connections page: for a signed-in person only, linked from the menu, drawn by its script
from the JSON API (the page itself holds no connection, so never a secret)."""

from __future__ import annotations

import pytest
from django.test import Client

from analyst.connections import sealing
from analyst.models import Connection

pytestmark = pytest.mark.django_db

PAGE = "/connections/"


def test_a_stranger_is_sent_to_sign_in():
    answer = Client().get(PAGE)
    assert answer.status_code == 302
    assert answer["Location"].startswith("/accounts/login/")


def test_the_page_is_linked_and_names_its_api_and_script(browser, alice):
    Connection.objects.create(
        owner=alice,
        name="warehouse",
        kind="postgres",
        url="postgresql://analyst@db.internal/sales",
        secret_sealed=sealing.seal("pw-in-the-page?"),
    )
    answer = browser.get(PAGE)
    assert answer.status_code == 200
    html = answer.content.decode()
    assert 'data-testid="connections-link"' in html  # the menu has it
    assert 'data-api-url="/api/connections"' in html
    assert "app/connections.js" in html
    assert "pw-in-the-page?" not in html and "db.internal" not in html  # drawn by the script


def test_only_get(browser):
    assert browser.post(PAGE).status_code == 405
