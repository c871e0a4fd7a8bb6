"""Forking a session: the same transcript, files and charts in a new session of the requester's,
and the kernel's state too when the source has a snapshot (restored on the fork's first use)."""

from __future__ import annotations

import json

from django.contrib.auth.models import AbstractBaseUser
from django.core.files.base import ContentFile, File
from django.db import transaction

from analyst import events, kernel_snapshots
from analyst.models import AnalysisSession, Artifact, DataFile, Event, KernelSnapshot, Message

FRESH_KERNEL = (
    "Forked from “{title}”. No saved kernel state existed, so this fork starts from a fresh kernel:"
    " earlier variables are gone; the files are here."
)
WITH_STATE = "Forked from “{title}”, with the kernel's variables and files as of {when}."


def do_fork(*, source: AnalysisSession, owner: AbstractBaseUser) -> AnalysisSession:
    with transaction.atomic():
        fork = AnalysisSession.objects.create(
            owner=owner, title=f"{source.title} (fork)"[:200], model=source.model, next_seq=source.next_seq
        )
        renamed = _copy_artifacts(source, fork)
        Event.objects.bulk_create(
            Event(session=fork, seq=e.seq, type=e.type, payload=_renamed(e.payload, renamed))
            for e in source.events.order_by("seq")
        )
        Message.objects.bulk_create(
            Message(session=fork, role=m.role, parts=m.parts) for m in source.messages.order_by("id")
        )
        _copy_files(source, fork)
        snapshot = kernel_snapshots.latest(source)
        if snapshot is None:
            text = FRESH_KERNEL.format(title=source.title)
        else:
            copy = KernelSnapshot.objects.create(
                session=fork, snapshot_id=snapshot.snapshot_id, size=snapshot.size, unsaved=snapshot.unsaved
            )
            # Its time, not now: a restore re-sends the uploads made after the snapshot was taken.
            KernelSnapshot.objects.filter(id=copy.id).update(created_at=snapshot.created_at)
            text = WITH_STATE.format(title=source.title, when=snapshot.created_at.strftime("%Y-%m-%d %H:%M"))
        payload = {"text": text, "from": str(source.id), "kernel_state": snapshot is not None}
        events.append(fork.id, "forked", payload)
    return fork


def _copy_artifacts(source: AnalysisSession, fork: AnalysisSession) -> dict[str, str]:
    """Copy each artifact into the fork (its own, so access checks stay per session); old id → new."""
    renamed = {}
    for artifact in source.artifacts.all():
        copy = Artifact(session=fork, mime_type=artifact.mime_type, size=artifact.size)
        with artifact.file.open("rb") as content:
            copy.file.save(artifact.file.name.rsplit("/", 1)[-1], ContentFile(content.read()), save=False)
        copy.save()
        renamed[str(artifact.id)] = str(copy.id)
    return renamed


def _renamed(payload: dict[str, object], renamed: dict[str, str]) -> dict[str, object]:
    refs = payload.get("artifacts")
    if not isinstance(refs, dict) or not refs:
        return payload
    text = json.dumps(refs)
    for old, new in renamed.items():
        text = text.replace(old, new)
    return {**payload, "artifacts": json.loads(text)}


def _copy_files(source: AnalysisSession, fork: AnalysisSession) -> None:
    for data_file in source.files.all():
        copy = DataFile(
            session=fork,
            name=data_file.name,
            path=data_file.path,
            size=data_file.size,
            rows=data_file.rows,
            columns=data_file.columns,
            summary=data_file.summary,
            description=data_file.description,
            read_options=data_file.read_options,
            placement=data_file.placement,
            placement_error=data_file.placement_error,
        )
        with data_file.stored.open("rb") as content:
            copy.stored.save(data_file.name, File(content), save=False)  # in chunks: uploads are large
        copy.save()
        DataFile.objects.filter(id=copy.id).update(uploaded_at=data_file.uploaded_at)
