"""An export reads the session as it now stands: an answer asked again (Regenerate) is left out,
its cells with it (they were undone in the kernel), so the notebook runs top to bottom; in a fork
of the session too, whose copied events mark it."""

from __future__ import annotations

from analyst.models import Turn
from analyst.realtime import events
from analyst.sessions import forks
from analyst.sessions.exports import transcript
from analyst.sessions.exports.transcript import Code, Prose


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
    # The report folds the old answer away rather than leave it out: read with it, it is marked.
    whole = transcript.read(session, superseded=True)
    assert [(b.text, b.superseded) for b in whole if isinstance(b, Prose) and b.role == "user"] == [
        ("Sum it", True),
        ("Sum it", False),
    ]
    assert [b.source for b in whole if isinstance(b, Code)] == ["old = 1", "new = 2"]

    # A fork's copies name no turn: those of the old answer say they are superseded.
    session.refresh_from_db()  # its next_seq
    fork = forks.do_fork(source=session, owner=alice)
    marked = [e.payload.get("superseded", False) for e in fork.events.order_by("seq")]
    assert marked == [True, True, True, False, False, False, False, False]
    assert transcript.read(fork) == blocks
    assert transcript.read(fork, superseded=True) == whole
