"""A member removed from a workspace, made a viewer, leaving it, or losing it with their single
sign-on groups: their schedules of its sessions stop at once (paused, beat's task disabled, the
reason said in the session); others' schedules, and theirs elsewhere, go on."""

from __future__ import annotations

from typing import Any

import pytest
from django.test.utils import override_settings
from django_celery_beat.models import PeriodicTask

from analyst.accounts import oidc_accounts
from analyst.models import Event, Schedule, Workspace
from analyst.runs import schedules
from analyst.sessions import sessions
from tests.workspaces.conftest import client_of, membership, user

pytestmark = pytest.mark.django_db


def schedule_of(name: str, workspace: Workspace | None) -> Schedule:
    """A schedule of ``name``'s, of a session of theirs in ``workspace``, with its beat task (as
    schedules.do_create makes one, without the cells it checks for)."""
    session = sessions.do_create(owner=user(name), model=None, title="Weekly", workspace=workspace)
    schedule = Schedule.objects.create(session=session, owner=user(name), cron="0 7 * * MON")
    return schedules.do_update(schedule, {})


def stopped(schedule: Schedule) -> bool:
    schedule.refresh_from_db()
    task = PeriodicTask.objects.get(id=schedule.periodic_task_id)
    return schedule.paused and not task.enabled


def notices(schedule: Schedule) -> list[str]:
    found = Event.objects.filter(session_id=schedule.session_id, type="notice", payload__code="schedule")
    return [event.payload["text"] for event in found]


def change(capture: Any, request: Any) -> None:
    with capture(execute=True):  # the change's transaction commits, as in a request
        answer = request()
    assert answer.status_code == 200, answer.content


def test_a_removed_members_schedule_stops_and_says_why(team, django_capture_on_commit_callbacks):
    hers, olgas = schedule_of("eve", team), schedule_of("olga", team)
    elsewhere = schedule_of("eve", None)  # her own workspace's
    gone = f"/api/workspaces/{team.id}/members/{membership(team, 'eve').id}"
    change(django_capture_on_commit_callbacks, lambda: client_of("adam").delete(gone))
    assert stopped(hers)
    assert notices(hers) == ["This schedule (0 7 * * MON) is paused: eve is no longer an editor of Team."]
    assert not stopped(olgas) and not stopped(elsewhere)
    assert notices(olgas) == notices(elsewhere) == []


def test_a_member_made_a_viewer_stops_theirs_and_one_made_an_admin_keeps_it(
    team, django_capture_on_commit_callbacks
):
    hers = schedule_of("eve", team)
    path = f"/api/workspaces/{team.id}/members/{membership(team, 'eve').id}"
    admin = {"role": "admin"}
    change(
        django_capture_on_commit_callbacks, lambda: client_of("olga").patch(path, admin, "application/json")
    )
    assert not stopped(hers)
    viewer = {"role": "viewer"}
    change(
        django_capture_on_commit_callbacks, lambda: client_of("olga").patch(path, viewer, "application/json")
    )
    assert stopped(hers)
    assert notices(hers) == ["This schedule (0 7 * * MON) is paused: eve is no longer an editor of Team."]


def test_a_member_who_leaves_stops_theirs(team, django_capture_on_commit_callbacks):
    hers = schedule_of("eve", team)
    path = f"/api/workspaces/{team.id}/members/{membership(team, 'eve').id}"
    change(django_capture_on_commit_callbacks, lambda: client_of("eve").delete(path))
    assert stopped(hers)


@override_settings(ANALYST_OIDC_GROUP_ROLES=[("analysts", "Team", "editor")])
def test_a_member_whose_groups_no_longer_give_the_workspace_stops_theirs(
    team, django_capture_on_commit_callbacks
):
    hers = schedule_of("eve", team)
    with django_capture_on_commit_callbacks(execute=True):
        oidc_accounts.apply_group_roles(user=user("eve"), groups=["other"])
    assert stopped(hers)


def test_a_deleted_members_schedules_go_with_them(team, django_capture_on_commit_callbacks):
    schedule_of("eve", team)
    with django_capture_on_commit_callbacks(execute=True):
        user("eve").delete()
    assert not Schedule.objects.filter(owner__username="eve").exists()
    assert not PeriodicTask.objects.filter(analyst_schedule__isnull=True).exists()
