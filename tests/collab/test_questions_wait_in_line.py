"""Members' questions wait in line: one turn at a time, in the order asked; each member has one
request in line at most; Stop stops the one running, not the ones waiting; a turn whose asker left
while it waited ends without running."""

from __future__ import annotations

import pytest

from analyst.models import Event, Turn
from analyst.turns import turns
from tests.workspaces.conftest import client_of, membership

pytestmark = pytest.mark.django_db(transaction=True)


def ask(name, session, text):
    return client_of(name).post(f"/api/sessions/{session.id}/messages", {"content": text}, "application/json")


def test_an_editors_question_waits_behind_anothers_and_runs_after_it(session):
    first = ask("olga", session, "By region?")
    assert first.status_code == 202, first.json()
    second = ask("eve", session, "By month?")
    assert second.status_code == 202, second.json()  # in line, not refused
    olgas, eves = Turn.objects.get(id=first.json()["turn"]), Turn.objects.get(id=second.json()["turn"])
    asked = Event.objects.filter(type="user_message", turn__in=[olgas, eves]).order_by("seq")
    assert [e.payload["by"] for e in asked] == ["olga", "eve"]  # the page says who asked each

    again = ask("eve", session, "And by week?")
    assert again.status_code == 409
    assert again.json()["error"]["message"] == (
        "a turn is already running in this session; wait for it or stop it"
    )
    assert ask("olga", session, "More?").status_code == 409
    assert ask("vic", session, "May I?").status_code == 403

    assert turns.claim(eves.id) is None  # waits for olga's
    assert turns.claim(olgas.id) is not None
    assert turns.claim(eves.id) is None
    turns.finish(olgas, Turn.Status.DONE)
    assert turns.claim(eves.id) is not None


def test_stop_stops_the_running_turn_not_the_ones_in_line(session):
    olgas = Turn.objects.get(id=ask("olga", session, "By region?").json()["turn"])
    eves = Turn.objects.get(id=ask("eve", session, "By month?").json()["turn"])
    turns.claim(olgas.id)
    assert client_of("eve").post(f"/api/sessions/{session.id}/cancel").json() == {"turn": olgas.id}
    olgas.refresh_from_db()
    eves.refresh_from_db()
    assert (olgas.cancel_requested, eves.cancel_requested) == (True, False)


def test_a_question_whose_asker_was_removed_while_it_waited_does_not_run(session, team):
    olgas = Turn.objects.get(id=ask("olga", session, "By region?").json()["turn"])
    adams = Turn.objects.get(id=ask("adam", session, "By month?").json()["turn"])
    turns.claim(olgas.id)
    assert (
        client_of("olga")
        .delete(f"/api/workspaces/{team.id}/members/{membership(team, 'adam').id}")
        .status_code
        == 200
    )
    turns.finish(olgas, Turn.Status.DONE)
    turns.execute(adams.id)  # the worker's side: claimed, checked, ended
    adams.refresh_from_db()
    assert adams.status == Turn.Status.FAILED
    ended = Event.objects.get(turn=adams, type="turn_failed")
    assert ended.payload["reason"] == "its requester may no longer work in this session"
    assert not Event.objects.filter(turn=adams, type="turn_started").exists()


def test_a_restart_behind_a_waiting_question_is_refused_and_stops_nothing(session):
    olgas = Turn.objects.get(id=ask("olga", session, "By region?").json()["turn"])
    ask("eve", session, "By month?")
    turns.claim(olgas.id)
    refused = client_of("adam").post(f"/api/sessions/{session.id}/kernel/restart")
    assert refused.status_code == 409
    assert refused.json()["error"]["message"] == (
        "eve's question waits to run in this session, and a restart would only come after it:"
        " restart once it has run"
    )
    hers = client_of("eve").post(f"/api/sessions/{session.id}/kernel/restart")
    assert hers.json()["error"]["message"].startswith("your question waits")
    olgas.refresh_from_db()
    assert (olgas.status, olgas.cancel_requested) == (Turn.Status.RUNNING, False)  # it runs on
    assert not session.turns.filter(kind=Turn.Kind.RESTART).exists()
