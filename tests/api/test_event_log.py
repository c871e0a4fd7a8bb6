"""The stored event log as JSON: only events after the given seq, in order, a page at a time."""

from __future__ import annotations

import pytest

from analyst.models import AnalysisSession
from analyst.realtime import events


@pytest.fixture
def logged(session):
    for n in range(1, 6):
        events.append(session.id, "stdout", {"text": f"line {n}\n"})
    return session


@pytest.mark.parametrize(
    ("after", "expected"), [(None, [1, 2, 3, 4, 5]), (0, [1, 2, 3, 4, 5]), (2, [3, 4, 5]), (5, []), (99, [])]
)
def test_only_events_after_n_in_order(api, logged, after, expected):
    query = "" if after is None else f"?after={after}"
    response = api.get(f"/api/sessions/{logged.id}/events{query}")
    assert response.status_code == 200
    listed = response.json()["events"]
    assert [e["seq"] for e in listed] == expected
    assert [e["payload"]["text"] for e in listed] == [f"line {n}\n" for n in expected]
    assert all(e["type"] == "stdout" and e["turn"] is None and e["created_at"] for e in listed)


@pytest.mark.parametrize("after", ["abc", "1.5", "", "0x2"])
def test_an_after_that_is_not_a_whole_number_is_400(api, logged, after):
    response = api.get(f"/api/sessions/{logged.id}/events", {"after": after})
    assert response.status_code == 400
    assert response.json() == {
        "error": {"code": "invalid_request", "message": "after and limit must be whole numbers"}
    }


def test_another_sessions_events_stay_out(api, logged, alice):
    other = AnalysisSession.objects.create(owner=alice, model="anthropic/claude-test")
    events.append(other.id, "notice", {"text": "elsewhere"})
    listed = api.get(f"/api/sessions/{logged.id}/events", {"after": 4}).json()["events"]
    assert [(e["seq"], e["type"]) for e in listed] == [(5, "stdout")]
    assert [e["seq"] for e in api.get(f"/api/sessions/{other.id}/events").json()["events"]] == [1]


@pytest.mark.parametrize(
    ("limit", "seqs", "more"), [(2, [1, 2], True), (5, [1, 2, 3, 4, 5], False), (9, [1, 2, 3, 4, 5], False)]
)
def test_a_page_of_at_most_limit_events_says_whether_more_follow(api, logged, limit, seqs, more):
    page = api.get(f"/api/sessions/{logged.id}/events", {"limit": limit}).json()
    assert [e["seq"] for e in page["events"]] == seqs and page["more"] is more


def test_a_long_log_comes_in_one_page_for_its_owner_and_in_smaller_ones_to_share_viewers(api, session):
    from analyst.models import ShareLink

    for n in range(1, 1202):
        events.append(session.id, "stdout", {"text": f"{n}\n"})
    owner = api.get(f"/api/sessions/{session.id}/events", {"limit": 5000}).json()
    assert len(owner["events"]) == 1201 and owner["more"] is False
    default = api.get(f"/api/sessions/{session.id}/events").json()
    assert len(default["events"]) == 1000 and default["more"] is True
    link = ShareLink.objects.create(session=session)
    shared = api.get(f"/api/shared/{link.token}/events", {"limit": 5000}).json()
    assert len(shared["events"]) == 1000 and shared["more"] is True  # no bigger page for a share


@pytest.mark.parametrize("limit", ["0", "-3", "x"])
def test_a_limit_below_one_or_not_a_number_is_400(api, logged, limit):
    assert api.get(f"/api/sessions/{logged.id}/events", {"limit": limit}).status_code == 400
