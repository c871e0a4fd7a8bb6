"""Run again on a file that lacks some of the original's columns: refused with a 422 that names
them (and the new file's others), before anything runs; no session, turn or file is made."""

from __future__ import annotations

from analyst.models import AnalysisSession, DataFile, Turn
from tests.integration.test_run_again_on_another_file import analysed, uploaded

OTHER = b"region,total\nnorth,1\n"
SHEET_LIKE = b'[{"region": "north", "amount": 1}]'


def test_missing_columns_are_said_and_nothing_is_made(stack, api, session):
    sales, _ = analysed(api, session)
    other = uploaded(api, session, "other.csv", OTHER)
    sessions, turns, files = AnalysisSession.objects.count(), Turn.objects.count(), DataFile.objects.count()
    events = session.events.count()

    response = api.post(
        f"/api/sessions/{session.id}/rerun", {"replace": sales.id, "with": other.id}, "application/json"
    )
    assert response.status_code == 422
    body = response.json()
    assert body["error"]["code"] == "columns_missing"
    assert body["missing"] == ["amount"] and body["extra"] == ["total"]
    assert body["error"]["message"] == (
        "other.csv lacks columns that sales.csv has: amount (it has others: total). Nothing was run."
    )
    assert (AnalysisSession.objects.count(), Turn.objects.count(), DataFile.objects.count()) == (
        sessions,
        turns,
        files,
    )
    assert session.events.count() == events


def test_a_file_of_another_format_is_refused(stack, api, session):
    sales, _ = analysed(api, session)
    other = uploaded(api, session, "records.json", SHEET_LIKE)
    response = api.post(
        f"/api/sessions/{session.id}/rerun", {"replace": sales.id, "with": other.id}, "application/json"
    )
    assert response.status_code == 422 and response.json()["error"]["code"] == "not_comparable"
    assert "same format" in response.json()["error"]["message"]
    assert AnalysisSession.objects.count() == 1
