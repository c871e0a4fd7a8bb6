"""A session still "Untitled analysis" is named after the next question asked in it, and that
question's user_message carries the name for the page; a name the user gave is never replaced.
A branch is named after its edited question."""

from __future__ import annotations

from analyst.models import AnalysisSession, Turn
from analyst.realtime import events
from analyst.sessions import sessions
from analyst.turns import turns


def ask(api, session, text: str):
    return api.post(f"/api/sessions/{session.id}/messages", {"content": text}, "application/json")


def asked(session) -> list[dict]:
    return [e.payload for e in session.events.filter(type="user_message").order_by("seq")]


def finish(session) -> None:
    session.turns.update(status=Turn.Status.DONE)


def test_the_first_question_names_the_session(api, session):
    assert session.title == "Untitled analysis"
    assert ask(api, session, "  which <b>airports</b> are busiest?\n").status_code == 202
    session.refresh_from_db()
    assert session.title == "Which airports are busiest?"
    assert asked(session) == [
        {
            "text": "  which <b>airports</b> are busiest?\n",
            "by": "alice",
            "session_title": "Which airports are busiest?",
        }
    ]
    assert api.get(f"/api/sessions/{session.id}").json()["title"] == "Which airports are busiest?"


def test_a_later_question_does_not_rename_it(api, session):
    ask(api, session, "First question")
    finish(session)
    ask(api, session, "Second question")
    session.refresh_from_db()
    assert session.title == "First question"
    assert asked(session)[1] == {"text": "Second question", "by": "alice"}


def test_the_users_own_name_stays(api, alice):
    """Given at creation, by a rename, or by a rename that lands while the question is on its way
    (the request's copy of the session still says Untitled): only the untitled one is named."""
    named = sessions.do_create(owner=alice, model="anthropic/claude-test", title="Q3 review")
    renamed = sessions.do_create(owner=alice, model="anthropic/claude-test", title=None)
    sessions.do_update(renamed, title="Mine")
    raced = sessions.do_create(owner=alice, model="anthropic/claude-test", title=None)
    AnalysisSession.objects.filter(id=raced.id).update(title="Renamed in another tab")
    untitled = sessions.do_create(owner=alice, model="anthropic/claude-test", title=None)
    for session in (named, renamed, raced, untitled):
        turns.do_start_turn(session=session, user=alice, kind=Turn.Kind.CHAT, text="What changed?")
        finish(session)  # under the user's limit of turns at once
    titles = dict(AnalysisSession.objects.values_list("id", "title"))
    assert [titles[s.id] for s in (named, renamed, raced, untitled)] == [
        "Q3 review",
        "Mine",
        "Renamed in another tab",
        "What changed?",
    ]
    assert all("session_title" not in payload for s in (named, renamed, raced) for payload in asked(s))


def test_a_question_without_words_leaves_it_untitled_for_the_next(api, session):
    ask(api, session, "```\nprint(1)\n```")
    session.refresh_from_db()
    assert session.title == "Untitled analysis"
    finish(session)
    ask(api, session, "And now in words")
    session.refresh_from_db()
    assert session.title == "And now in words"


def test_a_branch_is_named_after_its_edited_question(api, session, alice):
    AnalysisSession.objects.filter(id=session.id).update(title="US airports")
    turn = Turn.objects.create(
        session=session, requested_by=alice, kind=Turn.Kind.CHAT, input="Delays?", status=Turn.Status.DONE
    )
    events.append(session.id, "user_message", {"text": "Delays?"}, turn=turn)
    body = {"content": "Delays by *airline*, worst first"}
    response = api.post(f"/api/sessions/{session.id}/turns/{turn.id}/branch", body, "application/json")
    assert response.status_code == 201, response.content
    assert response.json()["title"] == "Delays by airline, worst first"
    assert (
        api.get(f"/api/sessions/{session.id}").json()["branches"][0]["title"]
        == "Delays by airline, worst first"
    )
