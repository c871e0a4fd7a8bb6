"""POST /cells with ``edited_from``: an edited copy of a past cell (the user's or the model's)
runs as a new cell whose event names the original; anything but a cell of the session is 400."""

from __future__ import annotations

import pytest

from analyst.models import Turn
from analyst.realtime import events


@pytest.fixture
def past_cells(session):
    """The seqs of a question, a model cell and a cell of the user's, as a session would hold."""
    question = events.append(session.id, "user_message", {"text": "Sum it"}).seq
    model = events.append(
        session.id, "tool_call", {"id": "toolu_01", "name": "run_python", "code": "x = 1"}
    ).seq
    own = events.append(session.id, "cell", {"code": "print(x)"}).seq
    return {"question": question, "model": model, "own": own}


@pytest.mark.parametrize("original", ["model", "own"])
def test_an_edited_cell_names_its_original(api, session, past_cells, original):
    response = api.post(
        f"/api/sessions/{session.id}/cells",
        {"code": "print(x + 1)", "edited_from": past_cells[original]},
        "application/json",
    )
    assert response.status_code == 202, response.content
    cell = session.events.filter(type="cell").order_by("-seq").first()
    assert cell.payload == {"code": "print(x + 1)", "by": "alice", "edited_from": past_cells[original]}
    assert Turn.objects.filter(session=session, kind=Turn.Kind.CELL, input="print(x + 1)").exists()


@pytest.mark.parametrize("edited_from", ["question", 999, "3", True, 1.5])
def test_anything_but_a_cell_of_the_session_is_refused(api, session, past_cells, edited_from):
    seq = past_cells.get(edited_from, edited_from) if isinstance(edited_from, str) else edited_from
    response = api.post(
        f"/api/sessions/{session.id}/cells", {"code": "print(1)", "edited_from": seq}, "application/json"
    )
    assert response.status_code == 400 and "edited_from" in response.json()["error"]["message"]
    assert not Turn.objects.filter(session=session).exists()
