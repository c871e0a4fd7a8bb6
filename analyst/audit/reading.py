"""Reading a workspace's audit log: who may (its owners and admins), filtered by user and action,
newest first, in pages by entry id."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404

from analyst.audit.records import ACTIONS
from analyst.models import AuditEntry, Membership, Workspace

READERS = (Membership.Role.OWNER, Membership.Role.ADMIN)
DEFAULT_PAGE = 100
MAX_PAGE = 1000
STREAM_BATCH = 500


class BadFilter(ValueError):
    """A filter or page the log cannot be read by: said in words."""


def check_reader(user: AbstractBaseUser | AnonymousUser, workspace_id: object) -> Workspace:
    """The workspace whose log ``user`` may read. Raises Http404 for a non-member (or no such
    workspace), PermissionDenied for a member who is neither owner nor admin."""
    membership = (
        Membership.objects.filter(workspace_id=workspace_id, user_id=user.pk)
        .select_related("workspace")
        .first()
        if user.is_authenticated
        else None
    )
    if membership is None:
        raise Http404("no such workspace")
    if membership.role not in READERS:
        name = membership.workspace.name
        raise PermissionDenied(
            f"only the owners and admins of {name} may read its audit log: ask one of them"
        )
    return membership.workspace


def filtered(workspace: Workspace, params: Any) -> QuerySet[AuditEntry]:
    """The workspace's entries that ``params`` (a QueryDict or dict: user, action, before) select,
    newest first. Raises BadFilter."""
    entries = AuditEntry.objects.filter(workspace=workspace).order_by("-id")
    username = params.get("user") or ""
    if username:
        entries = entries.filter(username=username)
    action = params.get("action") or ""
    if action:
        if action not in ACTIONS:
            raise BadFilter(f"unknown action {action!r}; the actions are: {', '.join(sorted(ACTIONS))}")
        entries = entries.filter(action=action)
    before = params.get("before") or ""
    if before:
        entries = entries.filter(id__lt=_whole("before", before))
    return entries


def page_size(params: Any) -> int:
    raw = params.get("limit") or ""
    size = _whole("limit", raw) if raw else DEFAULT_PAGE
    if not 1 <= size <= MAX_PAGE:
        raise BadFilter(f"limit must be between 1 and {MAX_PAGE}")
    return size


def page(workspace: Workspace, params: Any) -> dict[str, Any]:
    """{"entries": [...], "next": <the before= of the next page, or None>}."""
    size = page_size(params)
    found = list(filtered(workspace, params)[: size + 1])
    more = len(found) > size
    shown = found[:size]
    return {"entries": [as_dict(e) for e in shown], "next": shown[-1].id if more else None}


def streamed(workspace: Workspace, params: Any) -> Iterator[dict[str, Any]]:
    """Every selected entry (``limit`` caps them when given), newest first, read in batches."""
    entries = filtered(workspace, params)
    left = page_size(params) if params.get("limit") else None
    last: int | None = None
    while left is None or left > 0:
        batch_size = STREAM_BATCH if left is None else min(STREAM_BATCH, left)
        batch = list((entries if last is None else entries.filter(id__lt=last))[:batch_size])
        if not batch:
            return
        for entry in batch:
            yield as_dict(entry)
        last = batch[-1].id
        if left is not None:
            left -= len(batch)


def as_dict(entry: AuditEntry) -> dict[str, Any]:
    return {
        "id": entry.id,
        "at": entry.created_at.isoformat(),
        "user": entry.username,
        "action": entry.action,
        "target": entry.target,
        "detail": entry.detail,
        "address": entry.address,
    }


def _whole(name: str, raw: str) -> int:
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 18:
        raise BadFilter(f"{name} must be a whole number")
    return int(raw)
