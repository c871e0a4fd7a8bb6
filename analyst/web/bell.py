"""The header's bell: the signed-in user's unread notifications, counted for every page."""

from __future__ import annotations

from django.http import HttpRequest

from analyst.collab import notifications


def unread_notifications(request: HttpRequest) -> dict[str, object]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"unread_notifications": notifications.unread_count(user)}
