"""A person's API tokens: making a named one, listing them, revoking one, and who a token names."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.http import Http404
from django.utils import timezone

from analyst.models import ApiToken
from analyst.models.tokens import hash_token

MAX_NAME = 100
MAX_PER_USER = 50


class InvalidToken(ValueError):
    """The token cannot be made: a bad name, or the user already holds MAX_PER_USER."""


def check_name(name: object) -> str:
    """The name trimmed; InvalidToken when it is not 1 to MAX_NAME characters."""
    if not isinstance(name, str) or not name.strip():
        raise InvalidToken("Give the token a name, such as the script or agent that will use it.")
    name = name.strip()
    if len(name) > MAX_NAME:
        raise InvalidToken(f"The name is {len(name)} characters long; at most {MAX_NAME} are allowed.")
    return name


def do_create(*, user: AbstractBaseUser, name: object) -> tuple[ApiToken, str]:
    """A new token named ``name``: (its record, the secret, to be shown once and never again)."""
    name = check_name(name)
    with transaction.atomic():
        # Lock the user's row so two requests at once cannot both take the last place.
        get_user_model().objects.select_for_update().filter(pk=user.pk).first()
        if ApiToken.objects.filter(user=user).count() >= MAX_PER_USER:
            raise InvalidToken(f"You already have {MAX_PER_USER} tokens, the most allowed; revoke one first.")
        return ApiToken.issue(user, name=name)


def listing(user: AbstractBaseUser) -> list[ApiToken]:
    """The user's own tokens, newest first."""
    return list(ApiToken.objects.filter(user=user).order_by("-created_at", "-id"))


def do_revoke(*, user: AbstractBaseUser, token_id: object) -> ApiToken:
    """Delete the user's token, so it stops working at once; Http404 for anyone else's."""
    token = ApiToken.objects.filter(user=user, id=token_id).first()
    if token is None:
        raise Http404("no such token")
    token.delete()
    return token


def user_from_authorization(header: str) -> Any | None:
    """The active user whose API token ``Bearer <token>`` names (noting its use), else None."""
    if not header.startswith("Bearer "):
        return None
    return user_from_token(header[7:].strip())


def user_from_token(secret: str) -> Any | None:
    token = ApiToken.objects.select_related("user").filter(digest=hash_token(secret)).first()
    if token is None or not token.user.is_active:
        return None
    ApiToken.objects.filter(id=token.id).update(last_used_at=timezone.now())
    return token.user
