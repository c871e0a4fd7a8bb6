"""The API tokens page: a person's tokens, making a named one (its secret shown once), revoking."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from analyst.accounts import api_tokens


@never_cache  # the POST's answer holds a secret: no cache, and no back button, may keep it
@login_required
@require_http_methods(["GET", "POST"])
def token_list(request: HttpRequest) -> HttpResponse:
    context: dict[str, object] = {"max_name": api_tokens.MAX_NAME, "name": ""}
    status = 200
    if request.method == "POST":
        name = request.POST.get("name", "")
        try:
            context["created"], context["secret"] = api_tokens.do_create(user=request.user, name=name)
        except api_tokens.InvalidToken as exc:
            context.update(error=str(exc), name=name)
            status = 400
    context["tokens"] = api_tokens.listing(request.user)
    context["mcp_url"] = request.build_absolute_uri("/mcp")
    context["api_url"] = request.build_absolute_uri("/api/sessions")
    return render(request, "analyst/api_tokens.html", context, status=status)


@login_required
@require_POST
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    token = api_tokens.do_revoke(user=request.user, token_id=token_id)
    messages.info(request, f"The token “{token.name or token.prefix}” was revoked; it no longer works.")
    return redirect("api_tokens")
