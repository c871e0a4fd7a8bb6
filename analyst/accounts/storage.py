"""The bytes sessions store, as the storage limits count them: each stored file, chart and saved
kernel once, however many of the sessions counted (a session, its forks and branches) name it;
a user's sessions for their limit, a workspace's for its own."""

from __future__ import annotations

from collections.abc import Collection

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Max, QuerySet, Sum

from analyst.models import Artifact, DataFile, KernelSnapshot


def stored_bytes(user: AbstractBaseUser, *, leaving: Collection[int] = ()) -> int:
    """What ``user``'s uploads, charts and kernel snapshots take; ``leaving`` names snapshot rows
    to count as gone already (those a new snapshot would prune)."""
    return _stored({"session__owner": user}, leaving)


def workspace_stored_bytes(workspace_id: int, *, leaving: Collection[int] = ()) -> int:
    """What the uploads, charts and kernel snapshots of the workspace's sessions take, whoever
    owns them; ``leaving`` as for stored_bytes."""
    return _stored({"session__workspace_id": workspace_id}, leaving)


def _stored(sessions: dict[str, object], leaving: Collection[int]) -> int:
    snapshots = KernelSnapshot.objects.filter(**sessions).exclude(id__in=leaving)
    return (
        _once_each(DataFile.objects.filter(**sessions), "stored")
        + _once_each(Artifact.objects.filter(**sessions), "file")
        + _once_each(snapshots, "snapshot_id")
    )


def _once_each(rows: QuerySet, key: str) -> int:
    """The sizes of the distinct stored things ``rows`` name by ``key`` (copies name the same)."""
    sizes = rows.order_by().values(key).annotate(each=Max("size"))
    return sizes.aggregate(total=Sum("each"))["total"] or 0
