"""The conversation the model gets back: merged neighbours, and no tool call left unanswered."""

import pytest
from django.contrib.auth import get_user_model

from analyst.models import AnalysisSession, Turn
from analyst.turns.agent import history
from analyst.turns.agent.providers import TextPart, ToolCallPart, ToolResultPart

pytestmark = pytest.mark.django_db


@pytest.fixture
def session():
    owner = get_user_model().objects.create_user("owner")
    return AnalysisSession.objects.create(owner=owner, model="anthropic/claude-test")


def turn(session, text):
    return Turn.objects.create(session=session, requested_by=session.owner, kind=Turn.Kind.CHAT, input=text)


def test_a_stopped_tool_call_gets_a_result_before_the_next_question(session):
    first = turn(session, "slow")
    history.save(session, first, "user", [TextPart("slow")])
    history.save(session, first, "assistant", [ToolCallPart("t1", "run_python", {"code": "sleep()"})])
    second = turn(session, "again")
    history.save(session, second, "user", [TextPart("again")])

    messages = history.load(session, second)

    assert [m.role for m in messages] == ["user", "assistant", "user"]
    result, question = messages[2].parts
    assert isinstance(result, ToolResultPart) and result.tool_call_id == "t1" and result.is_error
    assert "ended before" in result.content[0].text
    assert question == TextPart("again")


def test_answered_calls_are_left_alone_and_neighbours_merged(session):
    only = turn(session, "q")
    history.save(session, only, "user", [TextPart("cell output")])
    history.save(session, only, "user", [TextPart("q")])
    history.save(session, only, "assistant", [ToolCallPart("t1", "run_python", {"code": "1"})])
    history.save(session, only, "user", [ToolResultPart("t1", [TextPart("1")])])

    messages = history.load(session, only)

    assert [m.role for m in messages] == ["user", "assistant", "user"]
    assert messages[0].parts == [TextPart("cell output"), TextPart("q")]
    assert messages[2].parts == [ToolResultPart("t1", [TextPart("1")])]


def ask(session, text, rounds):
    """A turn: the question, then ``rounds`` tool calls with their results, then an answer."""
    current = turn(session, text)
    history.save(session, current, "user", [TextPart(text)])
    for n in range(rounds):
        history.save(
            session, current, "assistant", [ToolCallPart(f"{text}-{n}", "run_python", {"code": "1"})]
        )
        history.save(session, current, "user", [ToolResultPart(f"{text}-{n}", [TextPart("1")])])
    history.save(session, current, "assistant", [TextPart(f"answer to {text}")])
    return current


def test_a_long_session_sends_its_newest_turns_whole_and_says_so(session):
    for n in range(6):
        ask(session, f"q{n}", rounds=2)  # 6 rows each
    last = turn(session, "now")
    history.save(session, last, "user", [TextPart("now")])

    messages = history.load(session, last, limit=10)

    first = messages[0]
    assert first.role == "user" and first.parts[0] == TextPart(history.EARLIER_OMITTED)
    assert first.parts[1] == TextPart("q5"), "cut at a turn's start, never inside a tool call"
    texts = [p.text for m in messages for p in m.parts if isinstance(p, TextPart)]
    assert texts[-1] == "now" and "q4" not in texts
    calls = {p.id for m in messages for p in m.parts if isinstance(p, ToolCallPart)}
    results = {p.tool_call_id for m in messages for p in m.parts if isinstance(p, ToolResultPart)}
    assert calls == results == {"q5-0", "q5-1"}


def test_a_short_session_is_sent_whole_without_a_note(session):
    ask(session, "q", rounds=1)
    last = turn(session, "now")
    history.save(session, last, "user", [TextPart("now")])
    messages = history.load(session, last, limit=10)
    assert history.EARLIER_OMITTED not in str(messages)
    assert messages[0].parts[0] == TextPart("q")
