"""Schedules: runs of a session's analysis at the times a cron expression names, in a timezone,
started by Celery beat from schedules kept in the database (django-celery-beat).

Each schedule owns one PeriodicTask that sends START_SCHEDULED_RUN with the schedule's id. The
task finds the due time it is for (the latest time the expression names, up to now), and starts
one run for it: the unique (schedule, due time, try) of a Run makes a second send of the same due
time (beat restarted between sending and saving) start nothing. A run still queued or running
when the next is due is not doubled: that due time is skipped, and said. A failed run is tried
again ``retries`` times (ANALYST_SCHEDULE_RETRIES unless the schedule says), then reported.
A schedule whose owner may no longer schedule runs of its session (removed from its workspace,
or made a viewer) stops: paused, its beat task disabled, and the reason said in the session; at
once when the membership changes (runs/member_changes.py), and again when beat's task comes.
"""

from __future__ import annotations

import datetime
import json
import logging
import zoneinfo
from collections.abc import Iterator
from typing import Any

from celery.schedules import crontab
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.core.validators import EmailValidator, URLValidator
from django.db import IntegrityError, transaction
from django.http import Http404
from django.utils import timezone
from django_celery_beat.models import CrontabSchedule, PeriodicTask

from analyst.accounts import limits as user_limits
from analyst.models import AnalysisSession, Run, Schedule, Turn
from analyst.realtime import events
from analyst.runs import parameters, runs
from analyst.sessions import replays, sessions
from analyst.turns import turns
from analyst.uploads import uploads
from analyst.workspaces import roles
from analyst.workspaces.roles import Action

log = logging.getLogger(__name__)

START_SCHEDULED_RUN = "analyst.tasks.start_scheduled_run"
FIELDS = ("minute", "hour", "day_of_month", "month_of_year", "day_of_week")
LOOKBACK_DAYS = 5 * 366  # the latest due time is found within this many days (29 February)
MAX_RECIPIENTS = 20
UNFINISHED = (Turn.Status.QUEUED, Turn.Status.RUNNING)
# Why a due run may not start: the analysis changed under its schedule, or its owner's limits.
CANNOT_START = (
    ValueError,
    replays.NothingToRun,
    uploads.StillReading,
    turns.TurnRefused,
    user_limits.LimitReached,
)


class ScheduleError(ValueError):
    """A schedule that cannot be: the message says why."""


def parsed_cron(cron: object) -> crontab:
    """The five fields of ``cron`` (minute hour day-of-month month day-of-week) as Celery reads
    them; ScheduleError for anything else."""
    if not isinstance(cron, str) or len(cron.split()) != len(FIELDS):
        raise ScheduleError("'cron' must have five fields: minute hour day-of-month month day-of-week")
    minute, hour, day_of_month, month, day_of_week = cron.split()
    try:
        return crontab(
            minute=minute, hour=hour, day_of_month=day_of_month, month_of_year=month, day_of_week=day_of_week
        )
    except (ValueError, IndexError, TypeError) as exc:
        raise ScheduleError(f"'cron' is not valid: {exc}") from None


def checked_timezone(name: object) -> zoneinfo.ZoneInfo:
    if not isinstance(name, str) or not name:
        raise ScheduleError("'timezone' must be a timezone's name, such as Europe/Paris")
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ScheduleError(f"unknown timezone {name!r}; use a name such as Europe/Paris or UTC") from None


def latest_due(cron: str, zone: str, now: datetime.datetime) -> datetime.datetime | None:
    """The latest time up to ``now`` that ``cron`` names in ``zone`` (Celery's reading: a day must
    match both its day of month and its day of week), as an aware UTC time; None within the
    look-back."""
    spec, tz = parsed_cron(cron), checked_timezone(zone)
    local = now.astimezone(tz)
    times = sorted(((h, m) for h in spec.hour for m in spec.minute), reverse=True)
    for day in _days(spec, local.date(), step=-1):
        for hour, minute in times:
            moment = datetime.datetime(day.year, day.month, day.day, hour, minute, tzinfo=tz)
            if moment <= local:
                return moment.astimezone(datetime.UTC)
    return None


def next_due(cron: str, zone: str, now: datetime.datetime) -> datetime.datetime | None:
    """The first time after ``now`` that ``cron`` names in ``zone``, as latest_due reads it."""
    spec, tz = parsed_cron(cron), checked_timezone(zone)
    local = now.astimezone(tz)
    times = sorted((h, m) for h in spec.hour for m in spec.minute)
    for day in _days(spec, local.date(), step=1):
        for hour, minute in times:
            moment = datetime.datetime(day.year, day.month, day.day, hour, minute, tzinfo=tz)
            if moment > local:
                return moment.astimezone(datetime.UTC)
    return None


def _days(spec: crontab, start: datetime.date, *, step: int) -> Iterator[datetime.date]:
    """The days from ``start`` on (``step`` 1) or back (-1), within LOOKBACK_DAYS, that ``spec``
    names by month, day of month and day of week (Celery's: 0 is Sunday)."""
    for offset in range(LOOKBACK_DAYS):
        day = start + datetime.timedelta(days=offset * step)
        weekday = (day.weekday() + 1) % 7
        if day.month in spec.month_of_year and day.day in spec.day_of_month and weekday in spec.day_of_week:
            yield day


def _recipients(value: object) -> list[str]:
    if not isinstance(value, list) or len(value) > MAX_RECIPIENTS:
        raise ScheduleError(f"'notify_emails' must be a list of at most {MAX_RECIPIENTS} addresses")
    for address in value:
        try:
            EmailValidator()(address)
        except (ValidationError, TypeError):
            raise ScheduleError(f"not an e-mail address: {address!r}") from None
    return list(dict.fromkeys(value))


def _webhook(value: object) -> str:
    if value == "":
        return ""
    try:
        URLValidator(schemes=["http", "https"])(value)
    except (ValidationError, TypeError):
        raise ScheduleError("'webhook_url' must be an http or https URL") from None
    assert isinstance(value, str)
    return value


def _retries(value: object) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 10:
        raise ScheduleError("'retries' must be a whole number from 0 to 10")
    return value


def _checked(session: AnalysisSession, fields: dict[str, Any]) -> dict[str, Any]:
    """The fields of a schedule given, checked; ScheduleError or ValueError saying what is wrong."""
    checked: dict[str, Any] = {}
    if "cron" in fields:
        parsed_cron(fields["cron"])
        checked["cron"] = " ".join(fields["cron"].split())
    if "timezone" in fields:
        checked["timezone"] = checked_timezone(fields["timezone"]).key
    if "parameters" in fields:
        # Checked now against today, kept as given: a relative date is resolved at each run.
        parameters.checked_values(
            parameters.declared(session), fields["parameters"], today=timezone.localdate()
        )
        checked["parameters"] = fields["parameters"]
    if "paused" in fields:
        if not isinstance(fields["paused"], bool):
            raise ScheduleError("'paused' must be true or false")
        checked["paused"] = fields["paused"]
    if "retries" in fields:
        checked["retries"] = _retries(fields["retries"])
    if "notify_emails" in fields:
        checked["notify_emails"] = _recipients(fields["notify_emails"])
    if "webhook_url" in fields:
        checked["webhook_url"] = _webhook(fields["webhook_url"])
    return checked


def do_create(*, session: AnalysisSession, user: AbstractBaseUser, fields: dict[str, Any]) -> Schedule:
    """A schedule of ``session``'s analysis; ScheduleError, ValueError, replays.NothingToRun."""
    if "cron" not in fields:
        raise ScheduleError("'cron' is required, such as \"0 7 * * MON\" (07:00 every Monday)")
    replays.check_cells(session)
    checked = {"timezone": "UTC", **_checked(session, fields)}
    with transaction.atomic():
        schedule = Schedule.objects.create(session=session, owner=user, **checked)
        _sync_task(schedule)
    return schedule


def do_update(schedule: Schedule, fields: dict[str, Any]) -> Schedule:
    checked = _checked(schedule.session, fields)
    with transaction.atomic():
        for name, value in checked.items():
            setattr(schedule, name, value)
        schedule.save()
        _sync_task(schedule)
    return schedule


def do_delete(schedule: Schedule) -> None:
    schedule.delete()  # its beat task with it (analyst.models.runs)


def _sync_task(schedule: Schedule) -> None:
    """The schedule's PeriodicTask, made or brought in line with it (beat reads it)."""
    minute, hour, day_of_month, month, day_of_week = schedule.cron.split()
    crontab_row, _ = CrontabSchedule.objects.get_or_create(
        minute=minute,
        hour=hour,
        day_of_month=day_of_month,
        month_of_year=month,
        day_of_week=day_of_week,
        timezone=schedule.timezone,
    )
    task = schedule.periodic_task or PeriodicTask(name=f"analyst schedule {schedule.id}")
    task.task = START_SCHEDULED_RUN
    task.crontab = crontab_row
    task.args = json.dumps([schedule.id])
    task.enabled = not schedule.paused
    task.save()
    if schedule.periodic_task_id != task.id:
        schedule.periodic_task = task
        schedule.save(update_fields=["periodic_task"])


def get_owned(user: AbstractBaseUser, schedule_id: object) -> Schedule:
    """The user's schedule of a session they may still schedule runs of; Http404 for any other."""
    try:
        schedule = Schedule.objects.select_related("session", "periodic_task").get(id=schedule_id, owner=user)
    except (Schedule.DoesNotExist, ValueError, TypeError):
        raise Http404("no such schedule") from None
    sessions.get_for(user, schedule.session_id, Action.SCHEDULE)
    return schedule


def as_dict(schedule: Schedule) -> dict[str, Any]:
    last, now = schedule.runs.order_by("-created_at").first(), timezone.now()
    return {
        "id": schedule.id,
        "session": str(schedule.session_id),
        "cron": schedule.cron,
        "timezone": schedule.timezone,
        "parameters": schedule.parameters,
        "paused": schedule.paused,
        "retries": schedule.retries,
        "notify_emails": schedule.notify_emails,
        "webhook_url": schedule.webhook_url,
        "next_run_at": None if schedule.paused else _iso(next_due(schedule.cron, schedule.timezone, now)),
        "last_run": runs.as_dict(last) if last else None,
    }


def _iso(moment: datetime.datetime | None) -> str | None:
    return moment.isoformat() if moment else None


def start_due_run(schedule_id: int, now: datetime.datetime | None = None) -> Run | None:
    """What beat's task does: the run of the latest due time, unless one was started for it, the
    schedule is paused or gone, or its last run is still going (then said, and skipped)."""
    now = now or timezone.now()
    schedule = Schedule.objects.select_related("session", "owner").filter(id=schedule_id).first()
    if schedule is None:  # deleted (its beat task with it, analyst.models.runs): a send on its way
        return None
    if schedule.paused:
        return None
    if not schedule.owner.is_active:
        do_update(schedule, {"paused": True})
        return None
    if not owner_may_schedule(schedule):
        do_stop_for_owner(schedule)
        return None
    due = latest_due(schedule.cron, schedule.timezone, now)
    if due is None or Run.objects.filter(schedule=schedule, due_at=due).exists():
        return None
    going = schedule.runs.filter(turn__status__in=UNFINISHED).exclude(due_at=due).first()
    if going is not None:
        _say(
            schedule, f"The run due at {_when(due, schedule)} was skipped: the one before it is still going."
        )
        return None
    return _start(schedule, due, attempt=1)


def owner_may_schedule(schedule: Schedule) -> bool:
    """Whether the schedule's owner may still start runs of its session (an editor or more of
    its workspace)."""
    return roles.may(sessions.role_in(schedule.owner, schedule.session), Action.SCHEDULE)


def do_stop_for_owner(schedule: Schedule) -> None:
    """Pause a schedule its owner may no longer keep, saying so in its session."""
    do_update(schedule, {"paused": True})
    who, where = schedule.owner.get_username(), roles.workspace_of(schedule.session).name
    _say(schedule, f"This schedule ({schedule.cron}) is paused: {who} is no longer an editor of {where}.")


def stop_schedules_of(*, user_id: object, workspace_id: object) -> list[Schedule]:
    """Stop the user's schedules of the workspace's sessions that they may no longer keep (their
    membership just went, or changed); those stopped."""
    found = Schedule.objects.filter(owner_id=user_id, session__workspace_id=workspace_id, paused=False)
    stopped = [s for s in found.select_related("session__workspace", "owner") if not owner_may_schedule(s)]
    for schedule in stopped:
        do_stop_for_owner(schedule)
    return stopped


def _start(schedule: Schedule, due: datetime.datetime, *, attempt: int) -> Run | None:
    values = schedule.parameters
    try:
        with transaction.atomic():
            return runs.do_start(
                source=schedule.session,
                user=schedule.owner,
                values=values,
                schedule=schedule,
                due_at=due,
                attempt=attempt,
                today=due.astimezone(checked_timezone(schedule.timezone)).date(),
            )
    except IntegrityError:  # this due time's try was started by another send of it
        return None
    except (*CANNOT_START, Http404) as exc:  # said where the schedule's owner looks
        _say(schedule, f"The run due at {_when(due, schedule)} could not start: {exc}.")
        return None


def retry_or_none(run: Run) -> Run | None:
    """A failed scheduled run's next try, while it has tries left."""
    schedule = run.schedule
    if schedule is None or schedule.paused:
        return None
    retries = settings.ANALYST_SCHEDULE_RETRIES if schedule.retries is None else schedule.retries
    if run.attempt > retries or run.due_at is None:
        return None
    return _start(schedule, run.due_at, attempt=run.attempt + 1)


def _when(due: datetime.datetime, schedule: Schedule) -> str:
    return due.astimezone(checked_timezone(schedule.timezone)).strftime("%Y-%m-%d %H:%M %Z")


def _say(schedule: Schedule, text: str) -> None:
    log.info("schedule %s: %s", schedule.id, text)
    events.append(schedule.session_id, "notice", {"text": text, "code": "schedule", "schedule": schedule.id})
