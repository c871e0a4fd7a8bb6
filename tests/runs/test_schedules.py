"""Schedules: cron expressions as Celery beat reads them, the due time a send of beat's task is
for (so that a second send of it starts nothing), a run still going not doubled, paused and
deleted schedules, and the API's checks."""

from __future__ import annotations

import datetime
import json

import pytest
from celery.schedules import crontab
from django.contrib.auth import get_user_model
from django.test import Client
from django_celery_beat.models import PeriodicTask

from analyst.models import AnalysisSession, ApiToken, Event, Run, Schedule, Turn
from analyst.runs import schedules
from analyst.runs.schedules import ScheduleError

UTC = datetime.UTC


def at(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text).astimezone(UTC)


@pytest.mark.parametrize(
    ("cron", "zone", "now", "due"),
    [
        ("0 7 * * MON", "UTC", "2026-12-04T12:00:00+00:00", "2026-11-30T07:00:00+00:00"),  # a Friday
        ("0 7 * * MON", "Europe/Paris", "2026-11-30T06:30:00+00:00", "2026-11-30T06:00:00+00:00"),
        ("0 7 * * MON", "Europe/Paris", "2026-11-30T05:59:00+00:00", "2026-11-23T06:00:00+00:00"),
        ("* * * * *", "UTC", "2026-12-04T12:34:56+00:00", "2026-12-04T12:34:00+00:00"),
        ("*/15 9-17 * * 1-5", "UTC", "2026-12-05T10:00:00+00:00", "2026-12-04T17:45:00+00:00"),  # Saturday
        ("30 2 29 2 *", "UTC", "2026-12-04T00:00:00+00:00", "2024-02-29T02:30:00+00:00"),
        ("0 0 1 * *", "America/New_York", "2026-03-01T04:59:00+00:00", "2026-02-01T05:00:00+00:00"),
    ],
)
def test_the_latest_due_time(cron, zone, now, due):
    assert schedules.latest_due(cron, zone, at(now)) == at(due)


@pytest.mark.parametrize(
    ("cron", "zone", "now", "due"),
    [
        ("0 7 * * MON", "UTC", "2026-12-04T12:00:00+00:00", "2026-12-07T07:00:00+00:00"),
        ("0 7 * * MON", "Europe/Paris", "2026-11-30T05:59:00+00:00", "2026-11-30T06:00:00+00:00"),
        ("* * * * *", "UTC", "2026-12-04T12:34:56.999+00:00", "2026-12-04T12:35:00+00:00"),
        ("* * * * *", "UTC", "2026-12-04T12:35:00+00:00", "2026-12-04T12:36:00+00:00"),  # after, not at
        ("30 2 29 2 *", "UTC", "2026-12-04T00:00:00+00:00", "2028-02-29T02:30:00+00:00"),
        ("0 3 * * *", "Europe/Paris", "2027-03-27T12:00:00+00:00", "2027-03-28T01:00:00+00:00"),  # DST
    ],
)
def test_the_next_due_time_is_a_whole_minute(cron, zone, now, due):
    assert schedules.next_due(cron, zone, at(now)) == at(due)


@pytest.mark.parametrize(
    "cron", ["", "0 7 * *", "61 * * * *", "0 7 * * funday", "*/0 * * * *", 7, "0 7 * * MON extra"]
)
def test_what_is_not_a_cron_expression(cron):
    with pytest.raises(ScheduleError):
        schedules.parsed_cron(cron)


@pytest.fixture
def alice(db):
    return get_user_model().objects.create_user("alice", password="pw")


@pytest.fixture
def api(alice) -> Client:
    _, secret = ApiToken.issue(alice)
    return Client(HTTP_AUTHORIZATION=f"Bearer {secret}")


@pytest.fixture
def analysis(alice) -> AnalysisSession:
    """A session whose analysis is one cell that succeeded, reading parameter('top', 3)."""
    session = AnalysisSession.objects.create(owner=alice, model="anthropic/claude-test")
    turn = Turn.objects.create(session=session, requested_by=alice, kind="cell", input="x", status="done")
    for seq, (kind, payload) in enumerate(
        [("cell", {"code": "top = parameter('top', 3)\nprint(top)"}), ("cell_done", {"failed": False})], 1
    ):
        Event.objects.create(session=session, turn=turn, seq=seq, type=kind, payload=payload)
    session.next_seq = 3
    session.save()
    return session


def post(api, session, body):
    return api.post(f"/api/sessions/{session.id}/schedules", json.dumps(body), "application/json")


def test_a_schedule_is_made_with_its_beat_task(api, analysis):
    made = post(api, analysis, {"cron": "0  7 * * MON", "timezone": "Europe/Paris", "parameters": {"top": 5}})
    assert made.status_code == 201, made.content
    body = made.json()
    assert (
        body["cron"] == "0 7 * * MON"
        and body["timezone"] == "Europe/Paris"
        and body["parameters"] == {"top": 5}
    )
    assert len(body["webhook_secret"]) >= 40 and body["next_run_at"].endswith("+00:00")
    task = PeriodicTask.objects.get(name=f"analyst schedule {body['id']}")
    assert task.task == "analyst.tasks.start_scheduled_run" and json.loads(task.args) == [body["id"]]
    assert (task.crontab.minute, task.crontab.hour, task.crontab.day_of_week) == ("0", "7", "MON")
    assert str(task.crontab.timezone) == "Europe/Paris" and task.enabled
    assert isinstance(task.schedule, crontab)  # what beat reads of it (no name of ours hides it)

    paused = api.patch(f"/api/schedules/{body['id']}", json.dumps({"paused": True}), "application/json")
    assert (
        paused.status_code == 200 and paused.json()["paused"] is True and paused.json()["next_run_at"] is None
    )
    task.refresh_from_db()
    assert not task.enabled
    assert "webhook_secret" not in api.get(f"/api/schedules/{body['id']}").json()
    assert api.delete(f"/api/schedules/{body['id']}").status_code == 200
    assert not PeriodicTask.objects.filter(id=task.id).exists() and not Schedule.objects.exists()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "'cron' is required"),
        ({"cron": "0 7 * * MON", "timezone": "Mars/Olympus"}, "unknown timezone"),
        ({"cron": "0 7 * * MON", "parameters": {"nope": 1}}, "unknown parameter 'nope'"),
        ({"cron": "0 7 * * MON", "parameters": {"top": "five"}}, "top must be of type int"),
        ({"cron": "0 7 * * MON", "notify_emails": ["not-an-address"]}, "not an e-mail address"),
        ({"cron": "0 7 * * MON", "webhook_url": "ftp://example.test/x"}, "http or https URL"),
        ({"cron": "0 7 * * MON", "retries": 11}, "from 0 to 10"),
    ],
)
def test_a_schedule_that_cannot_be_is_refused(api, analysis, body, message):
    refused = post(api, analysis, body)
    assert refused.status_code == 400 and message in refused.json()["error"]["message"]
    assert not Schedule.objects.exists() and not PeriodicTask.objects.exists()


def test_another_users_schedules_are_not_found(api, analysis, alice):
    bob = get_user_model().objects.create_user("bob", password="pw")
    theirs = AnalysisSession.objects.create(owner=bob, model="anthropic/claude-test")
    assert post(api, theirs, {"cron": "* * * * *"}).status_code == 404
    schedule = Schedule.objects.create(session=theirs, owner=bob, cron="* * * * *")
    assert api.get(f"/api/schedules/{schedule.id}").status_code == 404
    assert api.delete(f"/api/schedules/{schedule.id}").status_code == 404


def test_one_run_per_due_time_and_none_over_a_run_still_going(api, analysis):
    schedule = schedules.do_create(session=analysis, user=analysis.owner, fields={"cron": "* * * * *"})
    first = schedules.start_due_run(schedule.id, now=at("2026-12-04T12:00:30+00:00"))
    assert first is not None and first.due_at == at("2026-12-04T12:00:00+00:00")
    assert first.parameters == {} and first.schedule_id == schedule.id
    # Beat sent it again for the same minute (restarted before it saved the last run): nothing.
    assert schedules.start_due_run(schedule.id, now=at("2026-12-04T12:00:50+00:00")) is None
    # The next minute, the first is still queued: skipped, and said in the session.
    assert schedules.start_due_run(schedule.id, now=at("2026-12-04T12:01:05+00:00")) is None
    notices = [e.payload["text"] for e in Event.objects.filter(session=analysis, payload__code="schedule")]
    assert notices == ["The run due at 2026-12-04 12:01 UTC was skipped: the one before it is still going."]
    Turn.objects.filter(id=first.turn_id).update(status="done")
    second = schedules.start_due_run(schedule.id, now=at("2026-12-04T12:02:01+00:00"))
    assert second is not None and second.due_at == at("2026-12-04T12:02:00+00:00")
    assert Run.objects.filter(schedule=schedule).count() == 2


def test_paused_deleted_and_ownerless_schedules_start_nothing(analysis):
    schedule = schedules.do_create(
        session=analysis, user=analysis.owner, fields={"cron": "* * * * *", "paused": True}
    )
    assert schedules.start_due_run(schedule.id) is None
    schedules.do_update(schedule, {"paused": False})
    owner = analysis.owner
    owner.is_active = False
    owner.save()
    assert schedules.start_due_run(schedule.id) is None
    schedule.refresh_from_db()
    assert schedule.paused  # its owner can no longer sign in: it stops
    task_name = f"analyst schedule {schedule.id}"
    schedule_id = schedule.id
    analysis.delete()  # its schedules go with it; a send of beat's task already on its way finds none
    assert not Schedule.objects.exists() and not PeriodicTask.objects.filter(name=task_name).exists()
    assert schedules.start_due_run(schedule_id) is None
    assert not Run.objects.exists()
