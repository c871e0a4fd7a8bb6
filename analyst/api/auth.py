"""API authentication: `Authorization: Bearer <token>`, or the browser's login (with CSRF)."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed, JsonResponse
from django.middleware.csrf import CsrfViewMiddleware
from django.views.decorators.csrf import csrf_exempt

from analyst.accounts.api_tokens import user_from_authorization

View = Callable[..., HttpResponse]


class ApiError(Exception):
    """An answer of ``status`` saying ``code`` and ``message``, with the fields ``also`` gives."""

    def __init__(self, status: int, code: str, message: str, /, **also: object) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.also = status, code, message, also


def error_response(status: int, code: str, message: str, /, **also: object) -> JsonResponse:
    """``{"error": {"code", "message"}}``, with any fields ``also`` gives beside it."""
    return JsonResponse({"error": {"code": code, "message": message}, **also}, status=status)


def user_from_bearer(request: HttpRequest) -> Any | None:
    return user_from_authorization(request.headers.get("Authorization", ""))


def authenticate(request: HttpRequest) -> HttpResponse | None:
    """Sets request.user from a token or the login session; a response when neither holds."""
    if "Authorization" in request.headers:
        user = user_from_bearer(request)
        if user is None:
            return error_response(401, "unauthorized", "the API token is missing, wrong or revoked")
        request.user = user
        return None
    if not request.user.is_authenticated:
        return error_response(401, "unauthorized", "log in, or send Authorization: Bearer <token>")
    rejected = CsrfViewMiddleware(lambda r: HttpResponse()).process_view(request, None, (), {})
    if rejected is not None:
        return error_response(403, "csrf_failed", "CSRF check failed; send the X-CSRFToken header")
    return None


def api_view(view: View) -> View:
    """Authenticate, run the view, and turn ApiError into a JSON error body."""

    @csrf_exempt
    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        refused = authenticate(request)
        if refused is not None:
            return refused
        return answered_as_json(view, request, *args, **kwargs)

    return wrapper


def answered_as_json(view: View, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    """Run ``view``; ApiError, a 404 and a refused method become JSON error bodies."""
    try:
        response = view(request, *args, **kwargs)
    except ApiError as exc:
        return error_response(exc.status, exc.code, exc.message, **exc.also)
    except Http404 as exc:
        return error_response(404, "not_found", str(exc) or "not found")
    except PermissionDenied as exc:  # a member whose role does not allow it: the sentence says so
        return error_response(403, "forbidden", str(exc) or "not allowed")
    if isinstance(response, HttpResponseNotAllowed):
        refused = error_response(405, "method_not_allowed", f"{request.method} is not allowed here")
        refused["Allow"] = response["Allow"]
        return refused
    return response


MAX_JSON_DEPTH = 32  # our bodies are a level or two deep; a parser's recursion is not a limit


def json_body(request: HttpRequest) -> dict[str, Any]:
    too_deep = ApiError(400, "invalid_json", f"the request body nests deeper than {MAX_JSON_DEPTH} levels")
    try:
        body = json.loads(request.body or b"{}")
    except RecursionError:  # "[" * 100000: the parser gives up before we could count
        raise too_deep from None
    except ValueError:
        raise ApiError(400, "invalid_json", "the request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise ApiError(400, "invalid_json", "the request body must be a JSON object")
    if _depth(body) > MAX_JSON_DEPTH:
        raise too_deep
    return body


def _depth(value: object) -> int:
    """How deep lists and objects nest in a parsed JSON value (without recursing ourselves)."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            children = item.values() if isinstance(item, dict) else item
            pending.extend((child, depth + 1) for child in children)
    return deepest
