"""The authentication backend of single sign-on: mozilla-django-oidc's, its endpoints from the
issuer's discovery document, its accounts found by e-mail or made by username, and their workspace
roles set from the provider's groups at every sign-in.

Django's sessions ask this backend for their user at every request: an account deactivated here
(``is_active`` False) is signed out at its next request, as with a password (ModelBackend's
``get_user``; mozilla-django-oidc's own would keep it)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import SuspiciousOperation
from django.http import HttpRequest
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.utils import import_from_settings

from analyst.accounts.oidc_accounts import apply_group_roles, free_username, groups_of
from analyst.accounts.oidc_discovery import provider_configuration

# mozilla-django-oidc reads its configuration through ``get_settings``; these come from ours.
FIXED = {
    "OIDC_USE_PKCE": True,
    "OIDC_USE_NONCE": True,
    "OIDC_RP_SIGN_ALGO": "RS256",  # every OpenID provider must sign with it (Core 1.0, 15.1)
    "OIDC_TIMEOUT": 10,
    "OIDC_CREATE_USER": True,
}
OURS = {
    "OIDC_RP_CLIENT_ID": "ANALYST_OIDC_CLIENT_ID",
    "OIDC_RP_CLIENT_SECRET": "ANALYST_OIDC_CLIENT_SECRET",
    "OIDC_RP_SCOPES": "ANALYST_OIDC_SCOPES",
}
DISCOVERED = {
    "OIDC_OP_AUTHORIZATION_ENDPOINT": "authorization_endpoint",
    "OIDC_OP_TOKEN_ENDPOINT": "token_endpoint",
    "OIDC_OP_USER_ENDPOINT": "userinfo_endpoint",
    "OIDC_OP_JWKS_ENDPOINT": "jwks_uri",
}


def configured() -> bool:
    return bool(settings.ANALYST_OIDC_ISSUER and settings.ANALYST_OIDC_CLIENT_ID)


def oidc_setting(name: str, *default: Any) -> Any:
    """mozilla-django-oidc's setting ``name``, from ours or the provider's discovery document
    (which may raise ProviderUnreachable)."""
    if name in FIXED:
        return FIXED[name]
    if name in OURS:
        return getattr(settings, OURS[name])
    if name in DISCOVERED:
        return getattr(provider_configuration(settings.ANALYST_OIDC_ISSUER), DISCOVERED[name])
    return import_from_settings(name, *default)


class OIDCBackend(OIDCAuthenticationBackend):
    """Signs in whoever the callback's authorization code names; for everything else (a password,
    an API token) it answers None. Reads the provider's endpoints only once a sign-in needs them,
    never for a request's ``get_user``."""

    get_settings = staticmethod(oidc_setting)

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # the parent's reads every endpoint
        self.UserModel = get_user_model()

    OIDC_OP_TOKEN_ENDPOINT = property(lambda self: oidc_setting("OIDC_OP_TOKEN_ENDPOINT"))
    OIDC_OP_USER_ENDPOINT = property(lambda self: oidc_setting("OIDC_OP_USER_ENDPOINT"))
    OIDC_OP_JWKS_ENDPOINT = property(lambda self: oidc_setting("OIDC_OP_JWKS_ENDPOINT"))
    OIDC_RP_CLIENT_ID = property(lambda self: oidc_setting("OIDC_RP_CLIENT_ID"))
    OIDC_RP_CLIENT_SECRET = property(lambda self: oidc_setting("OIDC_RP_CLIENT_SECRET"))
    OIDC_RP_SIGN_ALGO = property(lambda self: oidc_setting("OIDC_RP_SIGN_ALGO"))
    OIDC_RP_IDP_SIGN_KEY = None  # keys come from the provider's JWKS

    def authenticate(self, request: HttpRequest | None, **kwargs: Any) -> AbstractBaseUser | None:
        # Only the callback view passes a nonce: a password login posted to a URL that carries
        # ?code=&state= must not start a token exchange.
        if not configured() or "nonce" not in kwargs:
            return None
        return super().authenticate(request, **kwargs)

    def get_user(self, user_id: Any) -> AbstractBaseUser | None:
        return ModelBackend.get_user(self, user_id)

    def verify_token(self, token: str, **kwargs: Any) -> dict[str, Any]:
        """The ID token's signature and nonce (the parent's checks), its issuer and audience."""
        payload = super().verify_token(token, **kwargs)
        if "nonce" in kwargs:  # an ID token (a signed userinfo response carries no nonce)
            audience = payload.get("aud")
            audiences = audience if isinstance(audience, list) else [audience]
            if payload.get("iss", "").rstrip("/") != settings.ANALYST_OIDC_ISSUER:
                raise SuspiciousOperation("The ID token's issuer is not ANALYST_OIDC_ISSUER.")
            if settings.ANALYST_OIDC_CLIENT_ID not in audiences:
                raise SuspiciousOperation("The ID token is not meant for ANALYST_OIDC_CLIENT_ID.")
        return payload

    def get_userinfo(self, access_token: str, id_token: str, payload: dict[str, Any]) -> dict[str, Any]:
        """The userinfo endpoint's claims over the ID token's (some providers put groups only in
        one of them), both about the same subject."""
        userinfo = super().get_userinfo(access_token, id_token, payload)
        if userinfo.get("sub") != payload.get("sub"):
            raise SuspiciousOperation("The userinfo response is about another subject than the ID token.")
        return {**payload, **userinfo}

    def verify_claims(self, claims: dict[str, Any]) -> bool:
        """Accounts are found by e-mail: one the provider says it has not verified is refused."""
        return bool(claims.get("email")) and claims.get("email_verified") is not False

    def create_user(self, claims: dict[str, Any]) -> AbstractBaseUser:
        user = self.UserModel.objects.create_user(free_username(claims), email=claims["email"])
        apply_group_roles(user=user, groups=groups_of(claims))
        return user

    def update_user(self, user: AbstractBaseUser, claims: dict[str, Any]) -> AbstractBaseUser:
        apply_group_roles(user=user, groups=groups_of(claims))
        return user
