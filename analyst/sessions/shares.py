"""Share links: a long random token gives read-only access to one session, until revoked."""

from __future__ import annotations

from django.db import transaction
from django.http import Http404
from django.utils import timezone

from analyst.audit import records as audit_records
from analyst.models import AnalysisSession, ShareLink
from analyst.realtime import broadcast as broadcaster


def do_create(
    *, session: AnalysisSession, allow_downloads: bool, allow_fork_state: bool = False
) -> ShareLink:
    link = ShareLink.objects.create(
        session=session, allow_downloads=allow_downloads, allow_fork_state=allow_fork_state
    )
    detail = {"link": link.id, "allow_downloads": allow_downloads, "allow_fork_state": allow_fork_state}
    audit_records.record_for_session("share_create", session, detail=detail)
    return link


def fork_carries(link: ShareLink) -> dict[str, bool]:
    """What a fork through ``link`` may take beyond the transcript: ``forks.do_fork``'s keywords."""
    return {"files": link.allow_downloads or link.allow_fork_state, "kernel_state": link.allow_fork_state}


def group_name(link_id: object) -> str:
    """The Channels group of a link's open WebSockets."""
    return f"share.{link_id}"


def do_revoke(*, session: AnalysisSession, link_id: object) -> None:
    """End the link: new requests get a 404, and its open WebSockets are closed."""
    revoked = ShareLink.objects.filter(session=session, id=link_id, revoked_at=None).update(
        revoked_at=timezone.now()
    )
    if revoked:
        audit_records.record_for_session("share_revoke", session, detail={"link": int(link_id)})
        transaction.on_commit(lambda: broadcaster.group_send(group_name(link_id), {"type": "share.revoked"}))


def active(session: AnalysisSession) -> list[ShareLink]:
    return list(session.share_links.filter(revoked_at=None))


def get_shared(token: str) -> ShareLink:
    """The live link for ``token`` (its session selected); Http404 for a wrong or revoked one."""
    link = ShareLink.objects.select_related("session").filter(token=token, revoked_at=None).first()
    if link is None:
        raise Http404("no such shared session")
    return link
