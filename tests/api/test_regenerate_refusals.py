"""POST /turns/<turn>/regenerate: only the owner's, only the session's last turn and a question,
never while a turn is unfinished; a good one is a new turn naming the old, with the same question."""

from __future__ import annotations

import pytest

from analyst.models import Turn
from analyst.realtime import events


def ask(session, alice, text="Sum it", kind=Turn.Kind.CHAT, status=Turn.Status.DONE) -> Turn:
    turn = Turn.objects.create(session=session, requested_by=alice, kind=kind, input=text, status=status)
    events.append(session.id, "user_message" if kind == Turn.Kind.CHAT else "cell", {"text": text}, turn=turn)
    return turn


def regenerate(client, session, turn_id):
    return client.post(f"/api/sessions/{session.id}/turns/{turn_id}/regenerate")


def test_the_last_answer_is_asked_again(api, session, alice):
    ask(session, alice, "First")
    last = ask(session, alice, "What sells?")
    response = regenerate(api, session, last.id)
    assert response.status_code == 202, response.content
    again = Turn.objects.get(id=response.json()["turn"])
    assert (again.kind, again.input, again.regenerates_id) == (Turn.Kind.CHAT, "What sells?", last.id)
    question = session.events.get(turn=again)
    # ask() stores turns without the API, so the session was still untitled: the question names it
    assert question.payload == {
        "text": "What sells?",
        "by": "alice",
        "regenerates": last.id,
        "session_title": "What sells?",
    }


def test_a_stranger_gets_404(stranger_api, session, alice):
    last = ask(session, alice)
    assert regenerate(stranger_api, session, last.id).status_code == 404
    assert Turn.objects.count() == 1


def test_a_turn_of_another_session_is_404(api, session, alice):
    other = session.__class__.objects.create(owner=alice, model=session.model)
    theirs = ask(other, alice)
    assert regenerate(api, session, theirs.id).status_code == 404
    assert regenerate(api, session, 999_999).status_code == 404


@pytest.mark.parametrize("status", [Turn.Status.QUEUED, Turn.Status.RUNNING])
def test_while_a_turn_is_unfinished_it_is_409(api, session, alice, status):
    last = ask(session, alice, status=status)
    response = regenerate(api, session, last.id)
    assert response.status_code == 409 and response.json()["error"]["code"] == "turn_running"
    assert Turn.objects.count() == 1


def test_only_the_last_turn(api, session, alice):
    first = ask(session, alice, "First")
    ask(session, alice, "Second")
    response = regenerate(api, session, first.id)
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "not_the_last_answer"
    assert Turn.objects.count() == 2


def test_not_after_a_cell_nor_a_cell_itself(api, session, alice):
    question = ask(session, alice, "First")
    cell = ask(session, alice, "x = 1", kind=Turn.Kind.CELL)
    for turn in (question, cell):
        response = regenerate(api, session, turn.id)
        assert response.status_code == 409 and response.json()["error"]["code"] == "not_the_last_answer"
    assert Turn.objects.count() == 2
