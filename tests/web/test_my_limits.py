"""The sessions page shows each of the user's limits beside what they use of it, and an admin
sets one user's own figures in the admin site."""

from __future__ import annotations

import pytest
from django.test import Client

from analyst.models import UserLimits

pytestmark = pytest.mark.django_db


def test_my_sessions_page_shows_my_limits(browser, alice, settings):
    settings.ANALYST_LIMIT_CONCURRENT_TURNS = 3
    UserLimits.objects.create(user=alice, stored_bytes=2 << 30)
    page = browser.get("/sessions/").content.decode()
    assert "Your limits" in page
    assert "<dt>Turns running at once</dt><dd>0 of 3</dd>" in page
    assert "<dt>Files, charts and saved kernels</dt><dd>0 bytes of 2 GiB</dd>" in page


def test_an_admin_raises_one_users_limits_in_the_admin_site(alice, django_user_model):
    admin = django_user_model.objects.create_superuser("root", password="a-long-passphrase")
    client = Client()
    client.force_login(admin)
    assert client.get("/admin/analyst/userlimits/").status_code == 200
    response = client.post(
        "/admin/analyst/userlimits/add/",
        {"user": alice.id, "concurrent_turns": "10", "cells_per_minute": "", "stored_bytes": ""},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    limits = UserLimits.objects.get(user=alice)
    assert limits.concurrent_turns == 10 and limits.cells_per_minute is None
