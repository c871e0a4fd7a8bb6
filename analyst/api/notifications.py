"""The signed-in user's notifications: listed unread first and paged, marked read one by one or
all at once."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET, require_POST

from analyst.api.auth import ApiError, api_view
from analyst.collab import notifications


@api_view
@require_GET
def notifications_collection(request: HttpRequest) -> JsonResponse:
    """``?offset=&limit=`` (at most MAX_PAGE); ``unread`` counts them all, not just this page's."""
    offset = _whole(request.GET.get("offset", "0"), "offset")
    limit = min(_whole(request.GET.get("limit", str(notifications.PAGE)), "limit"), notifications.MAX_PAGE)
    page, more = notifications.listed(request.user, offset=offset, limit=max(limit, 1))
    return JsonResponse(
        {
            "notifications": [notifications.as_dict(n) for n in page],
            "unread": notifications.unread_count(request.user),
            "more": more,
        }
    )


@api_view
@require_POST
def notification_read(request: HttpRequest, notification_id: int) -> JsonResponse:
    notifications.do_mark_read(request.user, notification_id)
    return JsonResponse({"unread": notifications.unread_count(request.user)})


@api_view
@require_POST
def notifications_read(request: HttpRequest) -> JsonResponse:
    marked = notifications.do_mark_all_read(request.user)
    return JsonResponse({"marked": marked, "unread": 0})


def _whole(value: str, name: str) -> int:
    if not value.isdigit():
        raise ApiError(400, "invalid_request", f"'{name}' must be a whole number")
    return int(value)
