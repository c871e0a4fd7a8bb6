"""An export reads the session as it now stands: an answer asked again (Regenerate) is left out,
its cells with it (they were undone in the kernel), so the notebook runs top to bottom."""

from __future__ import annotations

from analyst import events
from analyst.exports import transcript
from analyst.exports.transcript import Code, Prose
from analyst.models import Turn


def test_the_superseded_answer_is_not_exported(session, alice):
    first = Turn.objects.create(session=session, requested_by=alice, kind=Turn.Kind.CHAT, input="Sum it")
    events.append(session.id, "user_message", {"text": "Sum it"}, turn=first)
    events.append(session.id, "tool_call", {"id": "toolu_01", "code": "old = 1"}, turn=first)
    events.append(session.id, "assistant_message", {"text": "The old answer."}, turn=first)
    again = Turn.objects.create(
        session=session, requested_by=alice, kind=Turn.Kind.CHAT, input="Sum it", regenerates=first
    )
    events.append(session.id, "user_message", {"text": "Sum it", "regenerates": first.id}, turn=again)
    events.append(session.id, "tool_call", {"id": "toolu_02", "code": "new = 2"}, turn=again)
    events.append(session.id, "assistant_message", {"text": "The new answer."}, turn=again)
    events.append(session.id, "forked", {"text": "not a turn's"})  # events of no turn stay

    blocks = transcript.read(session)
    assert [b.text if isinstance(b, Prose) else b.source for b in blocks] == [
        "Sum it",
        "new = 2",
        "The new answer.",
    ]
    assert isinstance(blocks[1], Code)
