"""Signing up applies Django's password validators (AUTH_PASSWORD_VALIDATORS): similarity to the
username, at least 10 characters, not a common password, not all digits."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

pytestmark = pytest.mark.django_db


def sign_up(username: str, password: str) -> str:
    data = {"username": username, "password1": password, "password2": password}
    response = Client().post("/accounts/signup/", data)
    assert response.status_code == 200, "a refused signup shows the form again"
    return response.content.decode()


@pytest.mark.parametrize(
    ("username", "password", "message"),
    [
        ("bob", "qwertyuiop", "This password is too common."),
        ("bob", "w9#Kq2", "This password is too short. It must contain at least 10 characters."),
        ("bob", "4829103756", "This password is entirely numeric."),
        ("margaret-hamilton", "margaret-hamilton1", "The password is too similar to the username."),
    ],
)
def test_a_weak_password_is_refused_with_djangos_message(username, password, message):
    assert message in sign_up(username, password)
    assert not get_user_model().objects.exists()


def test_the_form_says_what_a_password_needs():
    page = Client().get("/accounts/signup/").content.decode()
    assert "Your password must contain at least 10 characters." in page
