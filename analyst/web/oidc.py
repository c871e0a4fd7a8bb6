"""Single sign-on's pages: the start of a sign-in (to the provider, with state, nonce and a PKCE
challenge) and its callback, which answers every failure with a page that says what happened:
never a 500, and never a session."""

from __future__ import annotations

import logging
from typing import Any

import jwt
import requests
from django.conf import settings
from django.core.exceptions import SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.generic import View
from mozilla_django_oidc import views as oidc_views

from analyst.accounts.oidc_backend import configured, oidc_setting
from analyst.accounts.oidc_discovery import ProviderUnreachable

log = logging.getLogger(__name__)

TAMPERED = (
    "This sign-in could not be verified: its answer from the provider does not match the sign-in "
    "this browser started. Nothing was signed in."
)
REFUSED = (
    "The sign-in did not complete: the provider refused it, it was not started in this browser "
    "(or has been used already), or this account is deactivated."
)
UNREACHABLE = "The sign-in provider could not be reached. Try again in a moment."


def single_sign_on(request: HttpRequest) -> dict[str, str]:
    """Templates' context: ``oidc_name`` (empty unless single sign-on is configured)."""
    return {"oidc_name": settings.ANALYST_OIDC_NAME if configured() else ""}


def failed(request: HttpRequest, message: str, *, status: int) -> HttpResponse:
    return render(request, "registration/oidc_failed.html", {"message": message}, status=status)


class Start(oidc_views.OIDCAuthenticationRequestView):
    get_settings = staticmethod(oidc_setting)

    def __init__(self, **kwargs: Any) -> None:  # the parent's reads the endpoint before any check
        View.__init__(self, **kwargs)

    def get(self, request: HttpRequest) -> HttpResponse:
        if not configured():
            raise Http404("Single sign-on is not configured.")
        try:
            self.OIDC_OP_AUTH_ENDPOINT = oidc_setting("OIDC_OP_AUTHORIZATION_ENDPOINT")
        except ProviderUnreachable as error:
            log.warning("single sign-on: %s", error)
            return failed(request, UNREACHABLE, status=502)
        self.OIDC_RP_CLIENT_ID = settings.ANALYST_OIDC_CLIENT_ID
        return super().get(request)


class Callback(oidc_views.OIDCAuthenticationCallbackView):
    get_settings = staticmethod(oidc_setting)

    def get(self, request: HttpRequest) -> HttpResponse:
        if not configured():
            raise Http404("Single sign-on is not configured.")
        try:
            return super().get(request)
        except (SuspiciousOperation, jwt.InvalidTokenError) as error:  # state, nonce, signature
            log.warning("single sign-on refused: %s", error)
            return failed(request, TAMPERED, status=400)
        except requests.HTTPError as error:  # the token endpoint refused the code or verifier
            log.warning("single sign-on refused by the provider: %s", error)
            return failed(request, REFUSED, status=403)
        except (requests.RequestException, ProviderUnreachable) as error:
            log.warning("single sign-on: %s", error)
            return failed(request, UNREACHABLE, status=502)

    def login_failure(self) -> HttpResponse:
        return failed(self.request, REFUSED, status=403)
