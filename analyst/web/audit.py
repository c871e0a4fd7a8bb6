"""A workspace's audit log page, for its owners and admins: a table with filters and "Export JSON
lines", drawn by static/app/audit.js from the JSON API (/api/workspaces/<id>/audit)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from analyst.audit import reading
from analyst.audit.records import ACTIONS


@login_required
@require_GET
def audit_page(request: HttpRequest, workspace_id: int) -> HttpResponse:
    workspace = reading.check_reader(request.user, workspace_id)  # 404 for a stranger, 403 for a member
    context = {
        "workspace": workspace,
        "api_url": f"/api/workspaces/{workspace.id}/audit",
        "actions": sorted(ACTIONS),
    }
    return render(request, "analyst/audit.html", context)
