"""The conversation the model gets back: merged neighbours, and no tool call left unanswered."""

import pytest
from django.contrib.auth import get_user_model

from analyst.agent import history
from analyst.agent.providers import TextPart, ToolCallPart, ToolResultPart
from analyst.models import AnalysisSession, Turn

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
