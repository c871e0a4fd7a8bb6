"""Forking a session: the same transcript and charts in a new session of the requester's, with its
files and the kernel's state (restored on the fork's first use) when the fork may have them.

One's own session forks whole. A fork through a share link carries the files only when the link
lets viewers download them, and the kernel state only when it lets forks keep it: the state is
pickled objects, which run code in the forker's kernel when restored, so the forker is told."""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import QuerySet

from analyst.audit import records as audit_records
from analyst.connections.attachments import copy_attachments, uses_secrets
from analyst.kernels import snapshots as kernel_snapshots
from analyst.models import AnalysisSession, Artifact, DataFile, Event, KernelSnapshot, Message
from analyst.realtime import events, naming
from analyst.sessions import sessions
from analyst.trust import privacy
from analyst.uploads import shared_files

FRESH_KERNEL = (
    "Forked from “{title}”. No saved kernel state existed, so this fork starts from a fresh kernel:"
    " earlier variables are gone; the files are here."
)
WITH_STATE = "Forked from “{title}”, with the kernel's variables and files as of {when}."
TRANSCRIPT_ONLY = (
    "Forked from “{title}”: the transcript only. Its share link does not include the files or the"
    " kernel's variables, so this fork starts from a fresh kernel with no files."
)
FILES_ONLY = (
    "Forked from “{title}”, with its files. Its share link does not include the kernel's variables,"
    " so this fork starts from a fresh kernel: earlier variables are gone."
)
KEPT_WITH_ITS_SECRETS = (
    "Forked from “{title}”, with its files. It uses connections or secrets, which stay with its"
    " owner, so this fork starts from a fresh kernel: the kernel's variables, which may hold what"
    " came through them, are not copied."
)
SOMEONE_ELSES_STATE = (
    "The kernel's variables in this fork come from someone else's session. They are pickled Python"
    " objects, and unpickling runs code: restoring them (on the first question or cell you run here)"
    " runs code from the person who shared it in your kernel, beside your files. If you do not trust"
    " them, delete this fork and fork again through a link without the kernel's variables."
)


def do_fork(
    *, source: AnalysisSession, owner: AbstractBaseUser, files: bool = True, kernel_state: bool = True
) -> AnalysisSession:
    """A copy of ``source`` for ``owner``: the transcript always; the uploads when ``files``; the
    latest snapshot when ``kernel_state`` (which holds the workdir, so it brings the files too).
    The copies share the stored bytes; raises LimitReached (and makes nothing) when they would take
    ``owner``'s storage past the limit, which only a fork of someone else's session can."""
    files = files or kernel_state
    title = f"A fork of “{source.title}”"
    with transaction.atomic():
        shared_files.hold_files_of(source.id)
        with shared_files.within_storage_limit(owner, what=title):
            fork = _do_fork(source, owner, files=files, kernel_state=kernel_state)
        detail = {"fork": str(fork.id), "files": files, "kernel_state": kernel_state}
        audit_records.record_for_session("fork", source, user=owner, detail=detail)
    return fork


def _do_fork(
    source: AnalysisSession, owner: AbstractBaseUser, *, files: bool, kernel_state: bool
) -> AnalysisSession:
    # Someone else's fork of a session with connections or secret variables: not its variables,
    # which may hold a secret the code copied into one (the fork could not even hide it).
    secret_bound = kernel_state and source.owner_id != owner.pk and uses_secrets(source)
    kernel_state = kernel_state and not secret_bound
    fork = AnalysisSession.objects.create(
        owner=owner,
        title=f"{source.title} (fork)"[:200],
        model=source.model,
        next_seq=source.next_seq,
        **kept_settings(source),
    )
    copy_attachments(source, fork)  # one's own fork keeps its connections; someone else's, none
    named = sessions.may_read(owner, source.id)  # else through a link: not who asked or ran each
    copy_log(source, fork, source.events.all(), source.messages.all(), source.artifacts.all(), named=named)
    if files:
        copy_files(source, fork)
    snapshot = kernel_snapshots.latest(source) if kernel_state else None
    if not files:
        text = TRANSCRIPT_ONLY.format(title=source.title)
    elif secret_bound:
        text = KEPT_WITH_ITS_SECRETS.format(title=source.title)
    elif not kernel_state:
        text = FILES_ONLY.format(title=source.title)
    elif snapshot is None:
        text = FRESH_KERNEL.format(title=source.title)
    else:
        copy_snapshot(snapshot, fork)
        text = WITH_STATE.format(title=source.title, when=snapshot.created_at.strftime("%Y-%m-%d %H:%M"))
    payload = {"text": text, "from": str(source.id), "kernel_state": snapshot is not None, "files": files}
    events.append(fork.id, "forked", payload)
    if snapshot is not None and source.owner_id != owner.pk:
        events.append(fork.id, "notice", {"text": SOMEONE_ELSES_STATE, "code": "someone_elses_state"})
    return fork


def copy_log(
    source: AnalysisSession,
    fork: AnalysisSession,
    events: QuerySet,
    messages: QuerySet,
    artifacts: QuerySet,
    *,
    named: bool = True,
) -> None:
    """``events`` of ``source`` (their seqs kept), ``messages`` (the model's view of them) and the
    ``artifacts`` they show, copied into ``fork``. The copies name no turn (turns stay with their
    session), so an event of an answer asked again since says so itself: ``superseded``; nor,
    unless ``named``, the members who asked or ran them (analyst.realtime.naming)."""
    shared_files.hold_files_of(source.id)
    renamed = _copy_artifacts(artifacts, fork)
    superseded = set(source.turns.filter(regenerations__isnull=False).values_list("id", flat=True))
    Event.objects.bulk_create(
        Event(session=fork, seq=e.seq, type=e.type, payload=_copied(e, renamed, superseded, named))
        for e in events.order_by("seq")
    )
    Message.objects.bulk_create(
        Message(session=fork, role=m.role, parts=m.parts) for m in messages.order_by("id")
    )


def copy_snapshot(snapshot: KernelSnapshot, fork: AnalysisSession) -> KernelSnapshot:
    """A row of ``fork``'s own naming the same sandboxd snapshot (kept until no row names it)."""
    copy = KernelSnapshot.objects.create(
        session=fork,
        snapshot_id=snapshot.snapshot_id,
        host=snapshot.host,
        size=snapshot.size,
        unsaved=snapshot.unsaved,
    )
    # Its time, not now: a restore re-sends the uploads made after the snapshot was taken.
    KernelSnapshot.objects.filter(id=copy.id).update(created_at=snapshot.created_at)
    return copy


def _copy_artifacts(artifacts: QuerySet, fork: AnalysisSession) -> dict[str, str]:
    """A row for each artifact in the fork (its own, so access checks stay per session), naming
    the same stored file (shared_files deletes it once no row names it); old id → new."""
    renamed = {}
    for artifact in artifacts:
        copy = Artifact(session=fork, mime_type=artifact.mime_type, size=artifact.size)
        copy.file.name = artifact.file.name
        copy.save()
        renamed[str(artifact.id)] = str(copy.id)
    return renamed


def _copied(event: Event, renamed: dict[str, str], superseded: set[int], named: bool) -> dict[str, object]:
    payload = _renamed(event.payload, renamed)
    payload = payload if named else naming.unnamed_payload(event.type, payload)
    return {**payload, "superseded": True} if event.turn_id in superseded else payload


def _renamed(payload: dict[str, object], renamed: dict[str, str]) -> dict[str, object]:
    refs = payload.get("artifacts")
    if not isinstance(refs, dict) or not refs:
        return payload
    text = json.dumps(refs)
    for old, new in renamed.items():
        text = text.replace(old, new)
    return {**payload, "artifacts": json.loads(text)}


def kept_settings(source: AnalysisSession) -> dict[str, Any]:
    """What a session made from ``source`` (a fork, a branch, a replay on another file, a run)
    keeps of its settings: what the model may see of the data (the mode in effect: a fork of a
    session its workspace keeps in schema mode stays in it, wherever it goes), and which cells
    wait for a person."""
    return {
        "privacy": privacy.effective(source),
        "send_chart_images": source.send_chart_images,
        "approve_cells": source.approve_cells,
    }


def made_in_place(source: AnalysisSession) -> dict[str, Any]:
    """What a session made from ``source`` in its place (a branch, a replay, a run) keeps: its
    settings and its workspace, where the same members reach it. A fork goes to its maker's own."""
    return {**kept_settings(source), "workspace_id": source.workspace_id}


def copy_files(source: AnalysisSession, fork: AnalysisSession) -> None:
    for data_file in source.files.all():
        copy_file(data_file, fork)


def copy_file(data_file: DataFile, session: AnalysisSession, **changed: Any) -> DataFile:
    """A copy of an upload in ``session``, naming the same stored content (shared_files deletes it
    once no row names it), with the fields in ``changed`` set otherwise; uploaded when the original
    was, unless its placement is changed (a file to be placed anew is new to the sandbox it goes to)."""
    fields = {
        "name": data_file.name,
        "path": data_file.path,
        "size": data_file.size,
        "rows": data_file.rows,
        "columns": data_file.columns,
        "summary": data_file.summary,
        "description": data_file.description,
        "read_options": data_file.read_options,
        "dictionary": data_file.dictionary,
        "column_marks": data_file.column_marks,  # what the model is kept from holds in the copy too
        "proposed_marks": data_file.proposed_marks,
        "placement": data_file.placement,
        "placement_error": data_file.placement_error,
    }
    shared_files.hold_files_of(data_file.session_id)  # its stored file is not deleted meanwhile
    copy = DataFile(session=session, **{**fields, **changed})
    copy.stored.name = data_file.stored.name
    copy.save()
    if "placement" not in changed:
        DataFile.objects.filter(id=copy.id).update(uploaded_at=data_file.uploaded_at)
    return copy
