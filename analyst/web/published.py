"""Published reports: /r/<token>, the report's page under the report's own strict policy, and
/r/<token>.json, its latest version as data. A revoked or unknown token is a 404; a report that
requires signing in sends an anonymous reader to sign in (its data answers 401)."""

from __future__ import annotations

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.cache import patch_cache_control
from django.views.decorators.http import require_GET

from analyst.accounts.api_tokens import user_from_authorization
from analyst.runs import published_data, published_page, publishing
from analyst.sessions import exports


@require_GET
def published_report(request: HttpRequest, token: str) -> HttpResponse:
    publication = publishing.get_published(token)
    if publication.sign_in_required and not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    version = request.GET.get("version") or None
    response = HttpResponse(
        published_page.page(publication, version), content_type="text/html; charset=utf-8"
    )
    response["Content-Security-Policy"] = exports.report_policy()
    response["X-Content-Type-Options"] = "nosniff"
    patch_cache_control(response, private=True, no_cache=True)
    return response


@require_GET
def published_json(request: HttpRequest, token: str) -> HttpResponse:
    publication = publishing.get_published(token)
    signed_in = request.user.is_authenticated or (
        user_from_authorization(request.headers.get("Authorization", "")) is not None
    )  # a dashboard or a spreadsheet pulls it with an API token
    if publication.sign_in_required and not signed_in:
        message = "this report requires signing in, or an API token (Authorization: Bearer <token>)"
        return JsonResponse({"error": {"code": "unauthorized", "message": message}}, status=401)
    response = JsonResponse(published_data.latest(publication))
    patch_cache_control(response, private=True, no_cache=True)
    return response
