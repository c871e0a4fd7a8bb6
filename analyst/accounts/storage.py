"""The bytes a user's sessions store, as the storage limit counts them: each stored file, chart and
saved kernel once, however many of their sessions (a session, its forks and branches) name it."""

from __future__ import annotations

from collections.abc import Collection

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Max, QuerySet, Sum

from analyst.models import Artifact, DataFile, KernelSnapshot


def stored_bytes(user: AbstractBaseUser, *, leaving: Collection[int] = ()) -> int:
    """What ``user``'s uploads, charts and kernel snapshots take; ``leaving`` names snapshot rows
    to count as gone already (those a new snapshot would prune)."""
    snapshots = KernelSnapshot.objects.filter(session__owner=user).exclude(id__in=leaving)
    return (
        _once_each(DataFile.objects.filter(session__owner=user), "stored")
        + _once_each(Artifact.objects.filter(session__owner=user), "file")
        + _once_each(snapshots, "snapshot_id")
    )


def _once_each(rows: QuerySet, key: str) -> int:
    """The sizes of the distinct stored things ``rows`` name by ``key`` (copies name the same)."""
    sizes = rows.order_by().values(key).annotate(each=Max("size"))
    return sizes.aggregate(total=Sum("each"))["total"] or 0
