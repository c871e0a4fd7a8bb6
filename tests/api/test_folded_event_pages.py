"""A page of the event log served with ?fold=N: an output's text past its first N lines is left
out and counted (the page shows no more at first), the stored log stays whole, and what the
live stream and an unfolded page serve is unchanged."""

from __future__ import annotations

import pytest

from analyst.models import Event, ShareLink
from analyst.realtime import events


def page(api, session, **params):
    response = api.get(f"/api/sessions/{session.id}/events", params)
    assert response.status_code == 200
    return response.json()["events"]


@pytest.fixture
def printed(session):
    """A user's cell that printed 10 lines in pieces of 4, 4 and 2 (the last unfinished)."""
    events.append(session.id, "cell", {"code": "print(...)"})
    for text in ["0\n1\n2\n3\n", "4\n5\n6\n7\n", "8\n9"]:
        events.append(session.id, "stdout", {"text": text})
    events.append(session.id, "cell_done", {"failed": False})
    return session


def test_text_past_the_first_lines_is_left_out_and_counted(api, printed):
    served = page(api, printed, fold=4)
    assert [e["seq"] for e in served] == [1, 2, 3, 4, 5]
    assert served[1]["payload"] == {"text": "0\n1\n2\n3\n"}  # the first 4 lines, whole
    assert served[2]["payload"] == {"text": "", "folded": {"lines": 4, "newline": True}}
    assert served[3]["payload"] == {"text": "", "folded": {"lines": 1, "newline": False}}
    assert [e["payload"] for e in page(api, printed, fold=5)][1:3] == [
        {"text": "0\n1\n2\n3\n"},
        {"text": "4\n5\n6\n7\n"},  # the piece reaching past line 5 comes whole: the page folds it
    ]


def test_the_stored_log_and_an_unfolded_page_stay_whole(api, printed):
    page(api, printed, fold=1)
    stored = [e.payload["text"] for e in Event.objects.filter(session=printed, type="stdout").order_by("seq")]
    assert stored == ["0\n1\n2\n3\n", "4\n5\n6\n7\n", "8\n9"]
    assert [e["payload"]["text"] for e in page(api, printed) if e["type"] == "stdout"] == stored
    assert events.after(printed.id, 0)[3]["payload"] == {"text": "8\n9"}  # what the socket replays


def test_each_output_counts_its_own_lines(api, session):
    model = {"tool_call_id": "toolu_1"}
    for kind, payload in [
        ("tool_call", {"id": "toolu_1", "name": "run_python", "code": "..."}),
        ("stdout", {"text": "a\nb\n", **model}),
        ("stderr", {"text": "warning\n", **model}),  # another output of the cell: counted apart
        ("stdout", {"text": "c\nd\n", **model}),
        ("stdout", {"text": "e\n", **model}),
        ("result", {"data": {"text/plain": "1"}, **model}),
        ("stdout", {"text": "f\n", **model}),  # after the result: a new output
    ]:
        events.append(session.id, kind, payload)
    folded = [e["seq"] for e in page(api, session, fold=2) if "folded" in e["payload"]]
    assert folded == [5]


def test_a_share_viewer_gets_folded_pages_too(api, printed):
    link = ShareLink.objects.create(session=printed)
    served = api.get(f"/api/shared/{link.token}/events", {"fold": 4}).json()["events"]
    assert [e["seq"] for e in served if "folded" in e["payload"]] == [3, 4]


@pytest.mark.parametrize("fold", ["0", "-1", "x", "1.5", ""])
def test_a_fold_below_one_or_not_a_number_is_400(api, printed, fold):
    response = api.get(f"/api/sessions/{printed.id}/events", {"fold": fold})
    assert response.status_code == 400
    assert response.json()["error"] == {
        "code": "invalid_request",
        "message": "fold must be a whole number of lines, at least 1",
    }
