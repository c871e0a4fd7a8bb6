"""Secrets sealed with Fernet: a round trip; a key derived from SECRET_KEY when none is set; and a
rotation: with the new key put first, `rotate_connections_key` seals every secret again so that
the new key alone opens them."""

from __future__ import annotations

import io

import pytest
from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured
from django.core.management import CommandError, call_command

from analyst.connections import sealing
from analyst.models import Connection, SessionSecret
from tests.connections.conftest import SECRET, make_connection


def test_a_round_trip_under_a_derived_key(settings):
    settings.ANALYST_CONNECTIONS_KEY = ""
    sealed = sealing.seal("héllo wörld")
    assert "héllo" not in sealed
    assert sealing.unseal(sealed) == "héllo wörld"
    assert sealing.seal("same") != sealing.seal("same")  # each seal has its own nonce

    settings.SECRET_KEY = "another-secret-key"
    with pytest.raises(sealing.SealBroken):
        sealing.unseal(sealed)  # derived from SECRET_KEY: another one opens nothing


def test_a_key_that_is_not_a_fernet_key_says_so(settings):
    settings.ANALYST_CONNECTIONS_KEY = "not-a-key"
    with pytest.raises(ImproperlyConfigured, match="must be Fernet keys"):
        sealing.seal("x")


def test_rotation_leaves_every_secret_open_to_the_new_key_alone(settings, alice, session):
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.ANALYST_CONNECTIONS_KEY = old
    connection = make_connection(alice)
    make_connection(alice, name="nosecret", secret="")
    variable = SessionSecret.objects.create(
        session=session, name="API_KEY", value_sealed=sealing.seal("k-123")
    )

    settings.ANALYST_CONNECTIONS_KEY = new
    with pytest.raises(sealing.SealBroken):
        sealing.unseal(Connection.objects.get(id=connection.id).secret_sealed)

    settings.ANALYST_CONNECTIONS_KEY = f"{new},{old}"
    said = io.StringIO()
    call_command("rotate_connections_key", stdout=said)
    assert said.getvalue().strip() == "resealed 1 connection secrets and 1 session secrets"

    settings.ANALYST_CONNECTIONS_KEY = new
    assert sealing.unseal(Connection.objects.get(id=connection.id).secret_sealed) == SECRET
    assert sealing.unseal(SessionSecret.objects.get(id=variable.id).value_sealed) == "k-123"
    assert Connection.objects.get(name="nosecret").secret_sealed == ""


def test_rotation_without_the_old_key_changes_nothing(settings, alice):
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.ANALYST_CONNECTIONS_KEY = old
    connection = make_connection(alice)
    settings.ANALYST_CONNECTIONS_KEY = new
    with pytest.raises(CommandError, match="keep the key it was sealed with"):
        call_command("rotate_connections_key", stdout=io.StringIO())
    settings.ANALYST_CONNECTIONS_KEY = old
    assert sealing.unseal(Connection.objects.get(id=connection.id).secret_sealed) == SECRET
