"""Sessions: who may see which, and creating one."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.http import Http404

from analyst.models import AnalysisSession


class InvalidModel(ValueError):
    pass


def get_owned(user: AbstractBaseUser, session_id: object) -> AnalysisSession:
    """The user's session; Http404 for anyone else's (no hint that it exists)."""
    try:
        return AnalysisSession.objects.get(id=session_id, owner=user)
    except (AnalysisSession.DoesNotExist, ValueError, TypeError):
        raise Http404("no such session") from None


def check_model(model: str) -> str:
    if model not in settings.ANALYST_MODELS:
        raise InvalidModel(f"unknown model {model!r}; choose one of {', '.join(settings.ANALYST_MODELS)}")
    return model


def do_create(*, owner: AbstractBaseUser, model: str | None, title: str | None) -> AnalysisSession:
    return AnalysisSession.objects.create(
        owner=owner,
        model=check_model(model or settings.ANALYST_DEFAULT_MODEL),
        title=(title or "Untitled analysis").strip()[:200] or "Untitled analysis",
    )


def as_dict(session: AnalysisSession) -> dict[str, object]:
    return {
        "id": str(session.id),
        "title": session.title,
        "model": session.model,
        "created_at": session.created_at.isoformat(),
        "updated_at": session.updated_at.isoformat(),
    }
