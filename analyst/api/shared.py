"""A shared session, read-only, for anyone holding its link's token: events, charts, and files
when the owner allowed downloads. Nothing here writes."""

from __future__ import annotations

import functools
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from analyst.api.auth import View, answered_as_json
from analyst.api.events import artifact_response, events_response
from analyst.api.files import download_response, listing
from analyst.models import Artifact, ShareLink
from analyst.sessions import shares


def shared_view(view: View) -> View:
    """Resolve the token to its live link (a 404 otherwise) and answer errors as JSON."""

    @require_GET
    def resolved(request: HttpRequest, token: str, *args: Any, **kwargs: Any) -> HttpResponse:
        return view(request, shares.get_shared(token), *args, **kwargs)

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return answered_as_json(resolved, request, *args, **kwargs)

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
