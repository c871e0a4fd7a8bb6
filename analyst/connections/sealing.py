"""Secrets at rest: sealed with Fernet under ANALYST_CONNECTIONS_KEY (comma-separated keys: the
first seals, any opens, so a key is rotated by putting the new one first and running
`manage.py rotate_connections_key`), or under a key derived from SECRET_KEY by HKDF."""

from __future__ import annotations

import base64

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

DERIVATION_INFO = b"analyst connections secrets"


class SealBroken(Exception):
    """A sealed secret none of the configured keys opens (a key was dropped too early), or that
    was altered."""


def _keys() -> list[Fernet]:
    configured = [key.strip() for key in (settings.ANALYST_CONNECTIONS_KEY or "").split(",") if key.strip()]
    if not configured:
        derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=DERIVATION_INFO)
        return [Fernet(base64.urlsafe_b64encode(derived.derive(settings.SECRET_KEY.encode())))]
    try:
        return [Fernet(key) for key in configured]
    except ValueError:
        raise ImproperlyConfigured(
            "ANALYST_CONNECTIONS_KEY must be Fernet keys (32 url-safe base64-encoded bytes each),"
            " comma-separated; make one with: python -c 'from cryptography.fernet import Fernet;"
            " print(Fernet.generate_key().decode())'"
        ) from None


def seal(text: str) -> str:
    return _keys()[0].encrypt(text.encode()).decode()


def unseal(sealed: str) -> str:
    """Raises SealBroken."""
    try:
        return MultiFernet(_keys()).decrypt(sealed.encode()).decode()
    except InvalidToken:
        raise SealBroken("a sealed secret could not be opened with the configured keys") from None


def reseal(sealed: str) -> str:
    """``sealed`` sealed again with the first key. Raises SealBroken."""
    try:
        return MultiFernet(_keys()).rotate(sealed.encode()).decode()
    except InvalidToken:
        raise SealBroken("a sealed secret could not be opened with the configured keys") from None
