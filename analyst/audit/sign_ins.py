"""Sign-ins, in the audit log of the account's personal workspace: each one (the login page, the
admin's, an SSO backend that calls ``login``) and each failed one (a name no account has goes in
no workspace's log)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model, user_logged_in, user_login_failed
from django.dispatch import receiver
from django.http import HttpRequest

from analyst.audit.records import personal_workspace, record


@receiver(user_logged_in, dispatch_uid="audit_sign_in")
def signed_in(sender: object, request: HttpRequest | None, user: Any, **_: object) -> None:
    record(
        "sign_in", user=user, workspace=personal_workspace(user.pk), target=f"user:{user.pk}", request=request
    )


@receiver(user_login_failed, dispatch_uid="audit_sign_in_failed")
def sign_in_failed(
    sender: object, credentials: dict[str, Any], request: HttpRequest | None = None, **_: object
) -> None:
    model = get_user_model()
    username = str(credentials.get(model.USERNAME_FIELD) or credentials.get("username") or "")[:150]
    account = model._default_manager.filter(**{model.USERNAME_FIELD: username}).first() if username else None
    record(
        "sign_in_failed",
        user=None,
        workspace=personal_workspace(account.pk) if account is not None else None,
        target=f"user:{account.pk}" if account is not None else "",
        detail={"username": username},
        request=request,
    )
