"""The Connections page: a person's databases, object stores and HTTP APIs, drawn and changed by
static/app/connections.js through the JSON API (/api/connections)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET


@login_required
@require_GET
def connections_page(request: HttpRequest) -> HttpResponse:
    return render(request, "analyst/connections.html", {"api_url": "/api/connections"})
