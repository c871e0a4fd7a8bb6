"""Published reports: a session's report at /r/<token>, for anyone with the link (or, with
``sign_in_required``, any signed-in user), until revoked.

Each run of the analysis that ends done is a version of it: the page shows the latest one (the
session's own report while no run is done), and the earlier ones by their run's id.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.http import Http404

from analyst.models import AnalysisSession, Publication, Run, Turn
from analyst.runs import runs

MAX_VERSIONS = 50  # listed, newest first; older runs stay in the session's runs


@dataclass(frozen=True)
class Version:
    """What a published report shows: a done run's session, or the published session itself."""

    session: AnalysisSession
    run: Run | None = None


def get(session: AnalysisSession) -> Publication | None:
    return Publication.objects.filter(session=session).first()


def do_publish(*, session: AnalysisSession, sign_in_required: bool | None) -> tuple[Publication, bool]:
    """The session's publication, made if it had none (True) with a new token; ``sign_in_required``
    (None: as it was, else False) set either way."""
    publication, created = Publication.objects.get_or_create(
        session=session, defaults={"sign_in_required": bool(sign_in_required)}
    )
    if sign_in_required is not None and publication.sign_in_required != sign_in_required:
        publication.sign_in_required = sign_in_required
        publication.save(update_fields=["sign_in_required"])
    return publication, created


def do_revoke(*, session: AnalysisSession) -> bool:
    """End the publication: its token answers 404 from now on (publishing again makes a new one)."""
    deleted, _ = Publication.objects.filter(session=session).delete()
    return deleted > 0


def get_published(token: str) -> Publication:
    """The live publication of ``token``, its session selected; Http404 for any other."""
    publication = Publication.objects.select_related("session").filter(token=token).first()
    if publication is None:
        raise Http404("no such published report")
    return publication


def done_runs(session: AnalysisSession) -> list[Run]:
    """The session's runs that ended done, newest first: its report's versions."""
    ended = runs.of_session(session).filter(turn__status=Turn.Status.DONE).select_related("session")
    found: list[Run] = []
    for run in ended.iterator(chunk_size=MAX_VERSIONS):
        if runs.status(run) == "done":
            found.append(run)
            if len(found) == MAX_VERSIONS:
                break
    return found


def chosen(
    publication: Publication, versions: list[Run], run_id: str | None
) -> tuple[Version, Version | None]:
    """The version ``run_id`` names (the latest without one) and the one before it, if any;
    Http404 for an id that is not one of ``versions``."""
    if run_id is None:
        index = 0
    else:
        index = next((n for n, run in enumerate(versions) if str(run.id) == run_id), -1)
        if index < 0:
            raise Http404("no such version of this report")
    if not versions:
        return Version(publication.session), None
    before = versions[index + 1] if index + 1 < len(versions) else None
    current = versions[index]
    return Version(current.session, current), Version(before.session, before) if before else None


def as_dict(publication: Publication) -> dict[str, Any]:
    return {
        "url": f"/r/{publication.token}",
        "token": publication.token,
        "sign_in_required": publication.sign_in_required,
        "created_at": publication.created_at.isoformat(),
        "versions": len(done_runs(publication.session)),
    }
