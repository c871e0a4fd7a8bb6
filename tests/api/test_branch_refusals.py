"""POST /turns/<turn>/branch: only the owner branches (a share link's viewer forks, never branches),
only at a question, never while a turn is unfinished; a question whose kernel state was pruned
branches only when told to start from an empty kernel. A refused branch makes no session."""

from __future__ import annotations

import pytest

from analyst.models import AnalysisSession, KernelSnapshot, Turn
from analyst.realtime import events


def ask(session, alice, text, *, code="", status=Turn.Status.DONE) -> Turn:
    turn = Turn.objects.create(
        session=session, requested_by=alice, kind=Turn.Kind.CHAT, input=text, status=status
    )
    events.append(session.id, "user_message", {"text": text}, turn=turn)
    if code:
        events.append(
            session.id, "tool_call", {"id": f"toolu_{turn.id}", "name": "run_python", "code": code}, turn=turn
        )
    return turn


def branch(client, session, turn_id, body):
    return client.post(f"/api/sessions/{session.id}/turns/{turn_id}/branch", body, "application/json")


def test_a_stranger_gets_404(stranger_api, session, alice, mallory):
    first = ask(session, alice, "First")
    assert branch(stranger_api, session, first.id, {"content": "Edited"}).status_code == 404
    assert not AnalysisSession.objects.filter(owner=mallory).exists()


def test_only_a_question(api, session, alice):
    cell = Turn.objects.create(session=session, requested_by=alice, kind=Turn.Kind.CELL, input="x = 1")
    events.append(session.id, "cell", {"code": "x = 1"}, turn=cell)
    cell.status = Turn.Status.DONE
    cell.save()
    response = branch(api, session, cell.id, {"content": "Edited"})
    assert response.status_code == 400 and "question" in response.json()["error"]["message"]
    assert AnalysisSession.objects.count() == 1


@pytest.mark.parametrize("body", [{}, {"content": "  "}, {"content": "x", "empty_kernel": "yes"}], ids=repr)
def test_a_bad_body_is_400(api, session, alice, body):
    first = ask(session, alice, "First")
    assert branch(api, session, first.id, body).status_code == 400
    assert AnalysisSession.objects.count() == 1


def test_while_a_turn_is_unfinished_it_is_409(api, session, alice):
    first = ask(session, alice, "First")
    ask(session, alice, "Second", status=Turn.Status.RUNNING)
    response = branch(api, session, first.id, {"content": "Edited"})
    assert response.status_code == 409 and response.json()["error"]["code"] == "turn_running"
    assert AnalysisSession.objects.count() == 1


def test_a_pruned_state_needs_an_empty_kernel(api, session, alice):
    ask(session, alice, "First", code="x = 1")  # ran code; its snapshot was pruned since
    second = ask(session, alice, "Second")
    response = branch(api, session, second.id, {"content": "Edited"})
    assert response.status_code == 409 and response.json()["error"]["code"] == "kernel_state_lost"
    assert "empty kernel" in response.json()["error"]["message"]
    assert AnalysisSession.objects.count() == 1

    response = branch(api, session, second.id, {"content": "Edited", "empty_kernel": True})
    assert response.status_code == 201, response.content
    made = AnalysisSession.objects.get(id=response.json()["id"])
    assert not KernelSnapshot.objects.filter(session=made).exists()
    forked = made.events.get(type="forked").payload
    assert forked["kernel_state"] is False and "empty kernel" in forked["text"]


def test_a_kept_state_goes_with_the_branch(api, session, alice):
    first = ask(session, alice, "First", code="x = 1")
    KernelSnapshot.objects.create(session=session, turn=first, snapshot_id="a" * 32, size=10)
    second = ask(session, alice, "Second", code="y = 2")
    KernelSnapshot.objects.create(session=session, turn=second, snapshot_id="b" * 32, size=10)
    ask(session, alice, "Third")
    response = branch(api, session, second.id, {"content": "Second, edited"})
    assert response.status_code == 201, response.content
    made = AnalysisSession.objects.get(id=response.json()["id"])
    assert list(made.snapshots.values_list("snapshot_id", flat=True)) == ["a" * 32]
    question = session.events.get(turn=second, type="user_message")
    assert [e.type for e in made.events.order_by("seq")] == [
        "user_message",
        "tool_call",
        "forked",
        "user_message",
    ]
    assert made.events.get(seq=question.seq).type == "forked"
    assert (made.branched_from_id, made.branched_at) == (session.id, question.seq)
    detail = api.get(f"/api/sessions/{session.id}").json()
    assert detail["branches"] == [{"id": str(made.id), "title": made.title, "at": question.seq}]
    assert api.get(f"/api/sessions/{made.id}").json()["branched_from"] == {
        "id": str(session.id),
        "at": question.seq,
    }
