"""Accounts on the web: the throttled password login (backend and page), and signups as
ANALYST_SIGNUP allows (open, with an invite code, or closed).

A signup never says whether its username was taken: a free name and a taken one (in any case)
get the same page, which asks to log in with the new account; an account is made only for a free
name. Whoever chose a taken name finds out only when that login fails, which the login throttle
counts, as it counts each signup (per username and per address), so names cannot be tried faster
than passwords."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth import views as auth_views
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.forms import UserCreationForm
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods

from analyst.accounts import login_throttle
from analyst.models import Invite

THROTTLED = "analyst_login_throttled"  # the request attribute that carries a refusal's Verdict
INVITE_INVALID = "This invite code is not valid, or has been used up."
SIGNED_UP = "signed_up"  # the login form's field that says it came from a signup


def signup_mode(request: HttpRequest) -> dict[str, str]:
    """Templates' context: ``signup_mode`` is ANALYST_SIGNUP (closed hides the "Sign up" links)."""
    return {"signup_mode": settings.ANALYST_SIGNUP}


class ThrottledModelBackend(ModelBackend):
    """Django's ModelBackend behind the login throttle, so every password login (the login page,
    the admin's, ``Client.login``) is counted. A refused attempt raises PermissionDenied, which
    ends ``authenticate()`` before any password is checked, and leaves its Verdict on the request
    for the page to say why."""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> AbstractBaseUser | None:
        username = username if username is not None else kwargs.get(get_user_model().USERNAME_FIELD)
        if username is None or password is None:
            return None
        address = login_throttle.client_address(request)
        verdict = login_throttle.attempt(username=username, address=address)
        if verdict.refused:
            if request is not None:
                setattr(request, THROTTLED, verdict)
            raise PermissionDenied(verdict.message)
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is not None:
            login_throttle.succeeded(username=username, address=address)
        return user


class LoginView(auth_views.LoginView):
    """Django's login page, answering a throttled attempt with 429 and saying so (and only so).

    A failed login posted from the signup's page says what that can mean: the name was taken.
    """

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context[SIGNED_UP] = self.request.POST.get(SIGNED_UP) == "1"
        return context

    def form_invalid(self, form: forms.Form) -> HttpResponse:
        verdict = getattr(self.request, THROTTLED, None)
        if verdict is None:
            return super().form_invalid(form)
        form.errors.clear()  # "enter a correct username and password" would be a guess at best
        form.add_error(None, verdict.message)
        response = self.render_to_response(self.get_context_data(form=form), status=429)
        response["Retry-After"] = str(verdict.retry_after)
        return response


class SignupForm(UserCreationForm):
    """Username and password twice (checked by AUTH_PASSWORD_VALIDATORS), and an invite code
    when ``invite_required``. Whether the username is taken is not checked here: a form error
    would tell anyone which names exist (see ``create_account``)."""

    invite = forms.CharField(label="Invite code", max_length=100, strip=True)

    def __init__(self, *args: Any, invite_required: bool, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not invite_required:
            del self.fields["invite"]

    def clean_username(self) -> str:
        # Django's own check here says "A user with that username already exists."
        return self.cleaned_data["username"]

    def validate_unique(self) -> None:
        """Skipped: the username is the only unique field, and its check would name it as taken."""

    def clean_invite(self) -> str:
        code = self.cleaned_data["invite"]
        if not Invite.is_usable(code):
            raise forms.ValidationError(INVITE_INVALID)
        return code

    def create_account(self) -> AbstractBaseUser | None:
        """The new account, or None when its name is taken (in any letter case), which the caller
        must not reveal. The password is hashed either way, so both take the same time. With an
        invite, one of its uses is taken with the account, and none for a taken name (so whoever
        chose it can try another name with the same code); raises InviteSpent if none is left."""
        user = self.save(commit=False)  # hashes the password
        model = get_user_model()
        username = getattr(user, model.USERNAME_FIELD)
        with transaction.atomic():
            if model._default_manager.filter(**{f"{model.USERNAME_FIELD}__iexact": username}).exists():
                return None
            if "invite" in self.fields and not Invite.spend(self.cleaned_data["invite"]):
                raise InviteSpent
            try:
                with transaction.atomic():  # a savepoint: a name taken meanwhile is taken all the same
                    user.save()
            except IntegrityError:
                transaction.set_rollback(True)  # and gives its invite use back
                return None
        return user


class InviteSpent(Exception):
    """The invite was used up between the form's check and the signup."""


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    """The signup page. A valid signup is answered alike whether its name was free (an account is
    made) or taken (nothing is): a page asking to log in with it, the name filled in."""
    mode = settings.ANALYST_SIGNUP
    if mode == "closed":
        return render(request, "registration/signup.html", {"closed": True}, status=403)
    form = SignupForm(
        request.POST or None,
        invite_required=mode == "invite",
        initial={"invite": request.GET.get("invite", "")},
    )
    context = {"form": form, "next": _next_page(request)}
    if request.method == "POST" and form.is_valid():
        username = form.cleaned_data["username"]
        verdict = login_throttle.attempt(username=username, address=login_throttle.client_address(request))
        if verdict.refused:
            form.add_error(None, _too_many(verdict.retry_after))
            response = render(request, "registration/signup.html", context, status=429)
            response["Retry-After"] = str(verdict.retry_after)
            return response
        try:
            form.create_account()
        except InviteSpent:
            form.add_error("invite", INVITE_INVALID)
        else:
            return render(request, "registration/signup_done.html", {**context, "username": username})
    return render(request, "registration/signup.html", context)


def _too_many(retry_after: int) -> str:
    minutes = max(1, -(-retry_after // 60))
    return (
        "Too many signups or failed logins for this username or from this address. "
        f"Try again in {minutes} minute{'s' if minutes != 1 else ''}."
    )


def _next_page(request: HttpRequest) -> str:
    """Where the signup came from (a share link's "sign up"), if it is a page of this site."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    safe = url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return target if safe else ""
