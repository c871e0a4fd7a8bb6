"""Replays: a session's analysis run again in order in a fresh kernel, in the same session
(Restart and run all) or in a new one on another file with the same columns.

The analysis is every cell that succeeded, in order, from the session's start or its last replay
(analyst.sessions.exports.transcript.analysis_cells): a restart does not shorten it, so Restart
and run all right after a Restart runs the whole analysis again. A replay is one turn of kind
REPLAY whose input is its plan as JSON; analyst.turns.agent.replay runs it. The model is not
called, except that a replay on another file which stops at a failing cell queues a question
asking it to repair that cell.

The new file of a replay on another file is put in the new session's sandbox under the original
file's path, so the cells' own ``pd.read_csv('data/sales.csv')`` reads it unchanged: rewriting
paths inside code would miss every path the code builds itself (f-strings, globs, os.path.join).
That is why both files must be of one format, and the new one must have every column the
original's first table has (more are said, and allowed).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from analyst.connections.attachments import copy_attachments
from analyst.files.reports import FORMAT_NAMES
from analyst.models import AnalysisSession, DataFile, Turn
from analyst.realtime import events
from analyst.sessions import forks, sessions
from analyst.sessions.exports.transcript import Code, analysis_cells
from analyst.turns import turns
from analyst.uploads import shared_files, uploads


class NothingToRun(Exception):
    """No cell of the session has run successfully."""


class NotComparable(Exception):
    """The two files cannot stand for each other (one unreadable, of another format)."""


class ColumnsMissing(Exception):
    """The new file lacks columns the original has; ``missing`` and ``extra`` name them."""

    def __init__(self, message: str, *, missing: list[str], extra: list[str]) -> None:
        super().__init__(message)
        self.missing = missing
        self.extra = extra


@dataclass(frozen=True)
class Rerun:
    """A checked request to run a session again on another file."""

    source: AnalysisSession
    original: DataFile
    new: DataFile
    cells: list[Code]
    extra: list[str]


def plan(cells: list[Code], *, restart: bool, repair: bool, announce: str, file: str = "") -> str:
    """A replay turn's input: its cells, whether it restarts the kernel first, whether a failing
    cell goes to the model to repair, what its first event says and the file it runs on."""
    listed = [{"code": cell.source, "by": cell.by} for cell in cells]
    plan = {"cells": listed, "restart": restart, "repair": repair, "announce": announce, "file": file}
    return json.dumps(plan)


def check_cells(session: AnalysisSession) -> list[Code]:
    cells = analysis_cells(session)
    if not cells:
        raise NothingToRun("no cell has run successfully in this session yet: there is nothing to run again")
    return cells


def do_run_all(*, session: AnalysisSession, user: AbstractBaseUser) -> Turn:
    """Restart and run all: one turn that restarts the kernel (files kept) and runs the session's
    analysis in order, stopping at the first error. TurnRefused while a turn runs."""
    turns.check_can_start(session)
    cells = check_cells(session)
    count = f"{len(cells)} cell{'s' if len(cells) != 1 else ''}"
    announce = f"Restarting the kernel and running the {count} of this session's analysis again, in order…"
    text = plan(cells, restart=True, repair=False, announce=announce)
    return turns.do_start_turn(session=session, user=user, kind=Turn.Kind.REPLAY, text=text)


def check_rerun(*, session: AnalysisSession, user: AbstractBaseUser, replace: object, using: object) -> Rerun:
    """The request to run ``session`` again with its upload ``replace`` swapped for ``using`` (an
    upload of any session the user may read). ValueError for ids that are not ids, Http404 for files
    not found, TurnRefused while a turn runs, uploads.StillReading while the new file is being
    described, NotComparable, ColumnsMissing, NothingToRun."""
    replace_id, using_id = _upload_id("replace", replace), _upload_id("with", using)
    turns.check_can_start(session)  # its cells are still being made
    original = uploads.owned_file(session, replace_id)
    new = sessions.readable_upload(user, using_id)
    if new.id == original.id:
        raise ValueError("choose another file than the one it replaces")
    if new.placement == DataFile.Placement.PLACING:
        raise uploads.StillReading(f"{new.name} is still being read; try again once it is described")
    extra = compared(original, new)
    return Rerun(session, original, new, check_cells(session), extra)


def copy_with_stand_ins(
    source: AnalysisSession,
    target: AnalysisSession,
    swaps: list[tuple[DataFile, DataFile]],
    *,
    user: AbstractBaseUser,
    what: str,
    leaving: Collection[int] = (),
) -> None:
    """``source``'s files copied into ``target`` but for ``leaving`` and each original of ``swaps``,
    whose stand-in is copied to its path instead and placed anew once committed; within the
    user's storage limit and the target's workspace's (LimitReached). The sessions' rows are held
    first, before the user's, as turns hold them."""
    for session_id in sorted({source.id, *(new.session_id for _, new in swaps)}, key=str):
        shared_files.hold_files_of(session_id)
    left_out = {*leaving, *(original.id for original, _ in swaps)}
    with shared_files.within_storage_limit(user, what=what, into=target):
        for data_file in source.files.exclude(id__in=left_out):
            forks.copy_file(data_file, target)
        for original, new in swaps:
            placed = forks.copy_file(
                new, target, path=original.path, placement=DataFile.Placement.PLACING, description={}
            )
            uploads.enqueue_on_commit(placed)


def _upload_id(name: str, value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{name!r} must be the id of an upload")
    return value


def columns(data_file: DataFile) -> list[str] | None:
    """The column names of the file's first readable table, as the sandbox described it."""
    for table in (data_file.description or {}).get("tables", []):
        if not table.get("error"):
            return [column["name"] for column in table.get("columns", [])]
    return None


def compared(original: DataFile, new: DataFile) -> list[str]:
    """The columns ``new`` has beyond ``original``'s; NotComparable or ColumnsMissing when it
    cannot stand for it."""
    if new.placement == DataFile.Placement.FAILED or columns(new) is None:
        raise NotComparable(f"{new.name} could not be read as a table, so its columns are not known")
    if columns(original) is None:
        raise NotComparable(f"{original.name} was never read as a table, so there are no columns to compare")
    was, now = (original.description or {}).get("format"), (new.description or {}).get("format")
    if was != now:
        raise NotComparable(
            f"{new.name} is read as {FORMAT_NAMES.get(now or '', 'another kind of file')} and"
            f" {original.name} as {FORMAT_NAMES.get(was or '', 'another')}: the cells read"
            f" {original.path} as the latter; upload the new data in the same format"
        )
    old_columns, new_columns = columns(original) or [], columns(new) or []
    missing = [name for name in old_columns if name not in new_columns]
    extra = [name for name in new_columns if name not in old_columns]
    if missing:
        message = f"{new.name} lacks columns that {original.name} has: {', '.join(missing)}"
        if extra:
            message += f" (it has others: {', '.join(extra)})"
        raise ColumnsMissing(message + ". Nothing was run.", missing=missing, extra=extra)
    return extra


def do_rerun(*, rerun: Rerun, user: AbstractBaseUser) -> tuple[AnalysisSession, Turn]:
    """A new session holding the source's other files and the new file under the original's
    path, and its first turn: the source's analysis, run in order in its fresh kernel."""
    source, original, new = rerun.source, rerun.original, rerun.new
    with transaction.atomic():
        title = f"{source.title} — on {new.name}"[:200]
        target = AnalysisSession.objects.create(
            owner=user, title=title, model=source.model, **forks.made_in_place(source)
        )
        copy_attachments(source, target)
        copy_with_stand_ins(source, target, [(original, new)], user=user, what=title, leaving={new.id})
        extra = f" It has columns the original has not: {', '.join(rerun.extra)}." if rerun.extra else ""
        text = (
            f"Run again from “{source.title}” on {new.name}, which stands in for {original.name}: it is in"
            f" this sandbox as {original.path}, where the cells read the original.{extra}"
        )
        payload: dict[str, Any] = {"text": text, "code": "rerun", "from": str(source.id)}
        payload |= {"file": new.name, "replaces": original.name, "path": original.path, "extra": rerun.extra}
        events.append(target.id, "notice", payload)
        count = f"{len(rerun.cells)} cell{'s' if len(rerun.cells) != 1 else ''}"
        announce = f"Running the {count} of “{source.title}” in order on {new.name}…"
        text = plan(rerun.cells, restart=False, repair=True, announce=announce, file=new.name)
        turn = turns.do_start_turn(session=target, user=user, kind=Turn.Kind.REPLAY, text=text)
    return target, turn
