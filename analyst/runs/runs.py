"""Runs: a session's analysis replayed with given parameters (and, optionally, other files), in a
fresh kernel, in a session of its own that the owner's lists leave out.

A run is a replay as "Run again on another file" makes one (analyst.sessions.replays): a new
session with the source's files, and a REPLAY turn of the source's analysis. Its plan carries
the run's values: set for ``parameter()`` before the first cell, and assigned right after the
parameters cell, as papermill injects them. A failing cell stops the run; with ``repair`` the
model is asked to repair it, as Run again does.
"""

from __future__ import annotations

import datetime
import json
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import QuerySet
from django.http import Http404
from django.utils import timezone

from analyst.connections.attachments import copy_attachments
from analyst.models import AnalysisSession, DataFile, Event, Run, Schedule, Turn
from analyst.runs import parameters
from analyst.sessions import forks, replays, sessions
from analyst.turns import turns
from analyst.uploads import uploads

OUTCOMES = {"replay_done": "done", "replay_stopped": "failed"}


def get_for(user: AbstractBaseUser, run_id: object) -> Run:
    """A run of a session the user may read; Http404 for any other."""
    try:
        run = Run.objects.select_related("turn", "session", "source").get(id=run_id)
    except (Run.DoesNotExist, ValueError, TypeError):
        raise Http404("no such run") from None
    sessions.get_for(user, run.source_id)
    return run


def do_start(
    *,
    source: AnalysisSession,
    user: AbstractBaseUser,
    values: object,
    files: object = None,
    repair: bool = False,
    today: datetime.date | None = None,
    schedule: Schedule | None = None,
    due_at: datetime.datetime | None = None,
    attempt: int = 1,
) -> Run:
    """A run of ``source``'s analysis with ``values`` for its parameters and ``files`` (path of a
    file of the source: id of an upload the user may read) in place of its files. ValueError,
    Http404, replays.NothingToRun, replays.NotComparable, replays.ColumnsMissing,
    uploads.StillReading, parameters.NotAParametersCell."""
    cells = replays.check_cells(source)
    declared = parameters.declared(source, cells)
    checked = parameters.checked_values(declared, values or {}, today=today or timezone.localdate())
    swaps = _swaps(source, user, files)
    values_with_defaults = {p.name: p.default for p in declared} | checked
    marked = parameters.marked_cell(source, cells)
    plan = json.loads(
        replays.plan(cells, restart=False, repair=repair, announce=_announce(source, checked), file="")
    )
    plan["parameters"] = {
        "before": parameters.kernel_values(values_with_defaults),
        "after": None if marked is None else marked + 1,  # the cell (1-based) they are set after
        "code": parameters.injected(checked, {p.name for p in declared if p.source == "cell"}),
        "values": checked,
    }
    with transaction.atomic():
        title = f"{source.title} — run"[:200]
        target = AnalysisSession.objects.create(
            owner=user, title=title, model=source.model, **forks.made_in_place(source)
        )
        copy_attachments(source, target)
        replays.copy_with_stand_ins(source, target, swaps, user=user, what=title)
        turn = turns.do_start_turn(session=target, user=user, kind=Turn.Kind.REPLAY, text=json.dumps(plan))
        given_files = {original.path: new.id for original, new in swaps}
        run = Run.objects.create(
            source=source,
            session=target,
            turn=turn,
            requested_by=user,
            parameters=checked,
            files=given_files,
            schedule=schedule,
            due_at=due_at,
            attempt=attempt,
        )
    return run


def _announce(source: AnalysisSession, values: dict[str, Any]) -> str:
    said = ", ".join(f"{name} = {value!r}" for name, value in values.items())
    with_values = f" with {said}" if said else " with its parameters' defaults"
    return f"Running the analysis of “{source.title}”{with_values}…"


def _swaps(source: AnalysisSession, user: AbstractBaseUser, files: object) -> list[tuple[DataFile, DataFile]]:
    """Each file of ``source`` named by path in ``files`` with the upload (one the user may read) that
    stands in for it, checked as Run again checks one."""
    if files in (None, {}):
        return []
    if not isinstance(files, dict):
        raise ValueError("'files' must be an object of the session's file paths and upload ids")
    swaps = []
    for path, upload_id in files.items():
        original = source.files.filter(path=path).first()
        if original is None:
            raise ValueError(f"this session has no file at {path!r}")
        if not isinstance(upload_id, int) or isinstance(upload_id, bool):
            raise ValueError(f"the file for {path!r} must be the id of an upload")
        new = sessions.readable_upload(user, upload_id)
        if new.placement == DataFile.Placement.PLACING:
            raise uploads.StillReading(f"{new.name} is still being read; try again once it is described")
        replays.compared(original, new)
        swaps.append((original, new))
    return swaps


def status(run: Run) -> str:
    """queued, running, done or failed (a cell failed, the run was stopped, its worker died)."""
    turn = run.turn
    if turn.status in (Turn.Status.QUEUED, Turn.Status.RUNNING):
        return str(turn.status)
    if turn.status != Turn.Status.DONE:
        return "failed"
    ended = Event.objects.filter(
        session=run.session, turn=turn, type="notice", payload__code__in=list(OUTCOMES)
    )
    codes = [event.payload.get("code") for event in ended]
    return "done" if codes == ["replay_done"] else "failed"


def cell_outcomes(run: Run) -> list[dict[str, Any]]:
    """Each cell the run ran, in order: its index in the plan (None for the parameters' own
    cells), its code and whether it failed."""
    outcomes: list[dict[str, Any]] = []
    for event in Event.objects.filter(session=run.session, turn=run.turn, type__in=["cell", "cell_done"]):
        if event.type == "cell":
            mark = event.payload.get("replay") or {}
            outcomes.append(
                {"index": mark.get("index"), "code": event.payload.get("code", ""), "failed": None}
            )
        elif outcomes and outcomes[-1]["failed"] is None:
            outcomes[-1]["failed"] = bool(event.payload.get("failed"))
    return outcomes


def as_dict(run: Run, *, details: bool = False) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "id": str(run.id),
        "session": str(run.source_id),
        "run_session": str(run.session_id),
        "url": f"/sessions/{run.session_id}/",
        "status": status(run),
        "parameters": run.parameters,
        "files": run.files,
        "schedule": run.schedule_id,
        "due_at": run.due_at.isoformat() if run.due_at else None,
        "attempt": run.attempt,
        "created_at": run.created_at.isoformat(),
        "finished_at": run.turn.finished_at.isoformat() if run.turn.finished_at else None,
    }
    if details:
        answer["cells"] = cell_outcomes(run)
        answer["events"] = [
            {"seq": e.seq, "type": e.type, "payload": e.payload}
            for e in Event.objects.filter(session=run.session).order_by("seq")
        ]
    return answer


def of_session(source: AnalysisSession) -> QuerySet[Run]:
    return Run.objects.filter(source=source).select_related("turn")
