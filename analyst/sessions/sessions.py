"""Sessions: who may see which, finding them by name, creating one."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Q, QuerySet
from django.http import Http404

from analyst.kernels import session_kernel
from analyst.kernels import snapshots as kernel_snapshots
from analyst.models import AnalysisSession, DataFile, Membership, Workspace
from analyst.turns import titles
from analyst.uploads import shared_files
from analyst.workspaces import roles
from analyst.workspaces.roles import Action, Role

SEARCH_WORDS = 10  # a longer query's other words are ignored: each is one more join


class InvalidModel(ValueError):
    pass


def get_for(user: AbstractBaseUser, session_id: object, action: Action = Action.READ) -> AnalysisSession:
    """The session, when ``user`` may do ``action`` in it. Http404 for anyone who is not a member
    of its workspace (no hint that it exists); PermissionDenied, with the sentence the member
    reads, when their role does not allow ``action``."""
    try:
        session = AnalysisSession.objects.select_related("workspace").get(id=session_id)
    except (AnalysisSession.DoesNotExist, ValueError, TypeError, ValidationError):
        raise Http404("no such session") from None
    role = role_in(user, session)
    if role is None:
        raise Http404("no such session")
    if not roles.may(role, action, owns_session=session.owner_id == user.pk):
        raise PermissionDenied(roles.refusal(role, action, roles.workspace_of(session)))
    return session


def role_in(user: AbstractBaseUser, session: AnalysisSession) -> Role | None:
    """The user's role in the session's workspace; a session of no workspace is its owner's alone."""
    if not user.is_authenticated:
        return None
    if session.workspace_id is None:
        return Role.OWNER if session.owner_id == user.pk else None
    return roles.role_of(user, session.workspace)


def may_read(user: AbstractBaseUser, session_id: object) -> bool:
    """Whether the user may read the session (what a live view asks again as it goes on)."""
    try:
        get_for(user, session_id)
    except Http404:
        return False
    return True


def readable_upload(user: AbstractBaseUser, upload_id: object) -> DataFile:
    """An upload of any session the user may read, to stand in for a file when an analysis runs
    again; Http404 for any other (a session of a workspace they left among them)."""
    found = DataFile.objects.filter(id=upload_id).first()
    if found is None or not may_read(user, found.session_id):
        raise Http404("no such file")
    return found


def listed(owner: AbstractBaseUser) -> QuerySet[AnalysisSession]:
    """The owner's sessions as their lists show them, newest first: not the sessions that runs
    of an analysis were made in (analyst.runs.runs), which its runs list."""
    member_of = Membership.objects.filter(user=owner).values("workspace")
    still_theirs = Q(workspace__isnull=True) | Q(workspace__in=member_of)  # not a workspace they left
    return AnalysisSession.objects.filter(still_theirs, owner=owner, as_run__isnull=True).select_related(
        "workspace"
    )


def in_workspace(workspace: Workspace) -> QuerySet[AnalysisSession]:
    """Every listed session of the workspace, whoever made it, newest first; a personal
    workspace's include its owner's sessions of no workspace (null means that one)."""
    here = Q(workspace=workspace)
    if workspace.personal_of_id is not None:
        here |= Q(workspace__isnull=True, owner_id=workspace.personal_of_id)
    return AnalysisSession.objects.filter(here, as_run__isnull=True).select_related("workspace")


def search(
    owner: AbstractBaseUser, query: str, workspace: Workspace | None = None
) -> QuerySet[AnalysisSession]:
    """The owner's listed sessions (or, given one, the workspace's), newest first, whose title or
    file names hold every word of ``query`` (case aside); all of them for an empty query."""
    found = listed(owner) if workspace is None else in_workspace(workspace)
    for word in query.split()[:SEARCH_WORDS]:
        found = found.filter(Q(title__icontains=word) | Q(files__name__icontains=word))
    return found.distinct()


def check_model(model: str) -> str:
    if model not in settings.ANALYST_MODELS:
        raise InvalidModel(f"unknown model {model!r}; choose one of {', '.join(settings.ANALYST_MODELS)}")
    return model


def do_create(
    *, owner: AbstractBaseUser, model: str | None, title: str | None, workspace: Workspace | None = None
) -> AnalysisSession:
    """A new session in ``workspace`` (None: the owner's personal one); the caller has checked
    that the owner may make sessions there."""
    return AnalysisSession.objects.create(
        owner=owner,
        workspace=workspace,
        model=check_model(model or settings.ANALYST_DEFAULT_MODEL),
        title=(title or titles.UNTITLED).strip()[:200] or titles.UNTITLED,
    )


def as_dict(session: AnalysisSession) -> dict[str, object]:
    workspace = roles.workspace_of(session)
    return {
        "id": str(session.id),
        "title": session.title,
        "model": session.model,
        "created_at": session.created_at.isoformat(),
        "updated_at": session.updated_at.isoformat(),
        "workspace": {"id": workspace.id, "name": workspace.name},
    }


def do_update(session: AnalysisSession, *, title: object = None, model: object = None) -> AnalysisSession:
    """Rename, or change the model of later turns. Raises InvalidModel or ValueError."""
    if title is not None:
        if not isinstance(title, str) or not title.strip():
            raise ValueError("the title must be a non-empty string")
        session.title = title.strip()[:200]
    if model is not None:
        if not isinstance(model, str):
            raise ValueError("the model must be a string")
        session.model = check_model(model)
    session.save(update_fields=["title", "model", "updated_at"])
    return session


def do_delete(session: AnalysisSession) -> None:
    """Delete the session with everything it made: its sandbox, and its snapshots and stored files
    but those a copy of it (a fork, a branch) still names."""
    session_kernel.release(session)
    for snapshot in session.snapshots.all():
        kernel_snapshots.forget(snapshot)
    stored = [f.stored for f in session.files.all()] + [a.file for a in session.artifacts.all()]
    session.delete()
    shared_files.release(stored)
