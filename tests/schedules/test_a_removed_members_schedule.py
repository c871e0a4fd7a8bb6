"""A schedule whose owner is no longer an editor of the session's workspace starts no run when
beat's task for it comes to the real worker: stopped when the member was removed, or (a change
whose after-commit work never ran, its process gone) stopped by the task itself, which says why."""

from __future__ import annotations

import json
import time
from typing import Any

from django.contrib.auth import get_user_model
from django.test import Client
from django_celery_beat.models import PeriodicTask

from analyst.models import ApiToken, Event, Membership, Run, Schedule, Workspace
from analyst.models.workspaces import Role
from analyst.runs import schedules
from analyst.sessions import sessions
from config.celery import app
from tests.integration.test_resume_and_fork import run_cell

SAID = "This schedule (* * * * *) is paused: eve is no longer an editor of Team."


def client(user: Any) -> Client:
    _, secret = ApiToken.issue(user)
    return Client(HTTP_AUTHORIZATION=f"Bearer {secret}")


def eves_schedule() -> tuple[Workspace, Schedule]:
    """Team, where eve edits and adam is an admin, and eve's schedule of a session there that
    has run a cell (so a run of it could start)."""
    users = get_user_model().objects
    eve, adam = users.create_user("eve"), users.create_user("adam")
    team = Workspace.objects.create(name="Team")
    Membership.objects.create(workspace=team, user=eve, role=Role.EDITOR)
    Membership.objects.create(workspace=team, user=adam, role=Role.ADMIN)
    session = sessions.do_create(owner=eve, model="anthropic/claude-test", title="Weekly", workspace=team)
    run_cell(client(eve), session, "print('weekly')")
    made = client(eve).post(
        f"/api/sessions/{session.id}/schedules", json.dumps({"cron": "* * * * *"}), "application/json"
    )
    assert made.status_code == 201, made.content
    return team, Schedule.objects.get(id=made.json()["id"])


def fire(schedule: Schedule, worker: Any, timeout: float = 60) -> None:
    """Send beat's task for the schedule, as beat sends it, and wait for the worker to finish it."""
    sent = app.send_task(schedules.START_SCHEDULED_RUN, args=[schedule.id])
    deadline = time.monotonic() + timeout
    while f"[{sent.id}] succeeded" not in worker.read_log():
        assert time.monotonic() < deadline, (
            f"the worker did not finish beat's task:\n{worker.read_log()[-3000:]}"
        )
        time.sleep(0.2)


def stopped(schedule: Schedule) -> bool:
    schedule.refresh_from_db()
    return schedule.paused and not PeriodicTask.objects.get(id=schedule.periodic_task_id).enabled


def notices(schedule: Schedule) -> list[str]:
    found = Event.objects.filter(session_id=schedule.session_id, type="notice", payload__code="schedule")
    return [event.payload["text"] for event in found]


def test_a_member_removed_through_the_api_has_their_schedule_stopped_before_beat_comes(stack, worker):
    team, schedule = eves_schedule()
    eve = Membership.objects.get(workspace=team, user__username="eve")
    adam = get_user_model().objects.get(username="adam")
    removed = client(adam).delete(f"/api/workspaces/{team.id}/members/{eve.id}")
    assert removed.status_code == 200, removed.content
    assert stopped(schedule)
    fire(schedule, worker)
    assert not Run.objects.filter(schedule=schedule).exists()
    assert notices(schedule) == [SAID]


def test_beats_task_stops_a_schedule_whose_owner_became_a_viewer_unnoticed(stack, worker):
    team, schedule = eves_schedule()
    # A change saved without its after-commit work (its process died between the two).
    Membership.objects.filter(workspace=team, user__username="eve").update(role=Role.VIEWER)
    assert not stopped(schedule)
    fire(schedule, worker)
    assert not Run.objects.filter(schedule=schedule).exists()
    assert stopped(schedule)
    assert notices(schedule) == [SAID]
