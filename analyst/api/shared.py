"""A shared session, read-only, for anyone holding its link's token: events, charts, and files
when the owner allowed downloads. Nothing here writes."""

from __future__ import annotations

import functools
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from analyst import shares
from analyst.api.auth import ApiError, View, error_response
from analyst.api.events import artifact_response, events_response
from analyst.api.files import download_response, listing
from analyst.models import Artifact, ShareLink


def shared_view(view: View) -> View:
    """Resolve the token to its live link (a 404 otherwise) and answer errors as JSON."""

    @require_GET
    @functools.wraps(view)
    def wrapper(request: HttpRequest, token: str, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return view(request, shares.get_shared(token), *args, **kwargs)
        except ApiError as exc:
            return error_response(exc.status, exc.code, exc.message)
        except Http404 as exc:
            return error_response(404, "not_found", str(exc) or "not found")

    return wrapper


@shared_view
def shared_events(request: HttpRequest, link: ShareLink) -> HttpResponse:
    return events_response(request, link.session_id, link_group=shares.group_name(link.id))


@shared_view
def shared_artifact(request: HttpRequest, link: ShareLink, artifact_id: str) -> HttpResponse:
    return artifact_response(Artifact.objects.filter(id=artifact_id, session_id=link.session_id).first())


def _downloads_allowed(link: ShareLink) -> None:
    if not link.allow_downloads:
        raise Http404("the owner has not shared this session's files")


@shared_view
def shared_files(request: HttpRequest, link: ShareLink) -> HttpResponse:
    _downloads_allowed(link)
    return listing(link.session, f"/api/shared/{link.token}/files/download")


@shared_view
def shared_download(request: HttpRequest, link: ShareLink) -> HttpResponse:
    _downloads_allowed(link)
    return download_response(link.session, request.GET.get("path", ""))
