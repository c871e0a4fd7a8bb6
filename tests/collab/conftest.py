"""The team of tests/workspaces (olga owns it, adam is an admin, eve edits, vic views; mallory is a
stranger), and a session of eve's in it with a question, a cell and an answer."""

from __future__ import annotations

import pytest

from analyst.models import AnalysisSession, Event, Turn, Workspace
from analyst.realtime import events
from tests.workspaces.conftest import mallory, team, user  # noqa: F401 (fixtures)


@pytest.fixture
def session(team: Workspace) -> AnalysisSession:  # noqa: F811 (the fixture imported above)
    """Eve's session in the team: olga asked (seq 1), the model ran a cell (2) that printed (3),
    and answered (4)."""
    made = AnalysisSession.objects.create(owner=user("eve"), workspace=team, model="m", title="Q3 sales")
    turn = Turn.objects.create(
        session=made, requested_by=user("olga"), kind=Turn.Kind.CHAT, input="Which region?", status="done"
    )
    events.append(made.id, "user_message", {"text": "Which region?", "by": "olga"}, turn=turn)
    events.append(made.id, "tool_call", {"id": "t1", "code": "df.groupby('region').sum()"}, turn=turn)
    events.append(made.id, "stdout", {"text": "North 12\n", "tool_call_id": "t1"}, turn=turn)
    events.append(made.id, "assistant_message", {"text": "The North sold most."}, turn=turn)
    return made


def seq_of(session: AnalysisSession, type: str) -> int:
    return Event.objects.get(session=session, type=type).seq
