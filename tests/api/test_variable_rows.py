"""GET /api/sessions/<id>/variables/<name>/rows and /rows.csv: the owner pages, sorts and filters
the whole live frame and downloads it as CSV; an unknown table is 404, a bad parameter 400, a
CSV past ANALYST_GRID_CSV_MAX_BYTES 413, a running turn 409; a stranger gets 404."""

from __future__ import annotations

import csv
import io

import pytest
from asgiref.sync import async_to_sync

from analyst.models import Turn

SETUP = (
    "import pandas as pd\n"
    "df = pd.DataFrame({'id': range(3376),"
    " 'city': ['Anchorage' if i % 844 == 5 else 'Oslo' for i in range(3376)]})\n"
)


async def read_all(chunks):
    return b"".join([chunk async for chunk in chunks])


@pytest.fixture
def live_session(session, sandbox, sandboxd, monkeypatch):
    monkeypatch.setenv("SANDBOXD_URL", sandboxd.url)
    monkeypatch.setenv("SANDBOXD_TOKEN", sandboxd.token)
    assert sandbox.run_code(SETUP).error is None
    session.sandbox_id = sandbox.sandbox_id
    session.save(update_fields=["sandbox_id"])
    return session


def test_a_filter_and_a_sort_cover_the_whole_frame(api, live_session):
    url = f"/api/sessions/{live_session.id}/variables/df/rows"
    body = api.get(url, {"filter": "anchorage", "sort": "id", "desc": "1", "limit": "10"}).json()
    assert body["total_rows"] == 4 and body["all_rows"] == 3376  # 3 of the 4 lie past row 1,000
    assert [row[1] for row in body["rows"]] == [2537, 1693, 849, 5]
    assert body["columns"] == [
        {"name": "index", "type": "integer"},
        {"name": "id", "type": "integer"},
        {"name": "city", "type": "string"},
    ]
    second = api.get(url, {"offset": "3370", "limit": "10"}).json()
    assert second["offset"] == 3370 and [row[1] for row in second["rows"]] == list(range(3370, 3376))


def test_the_csv_is_the_whole_filtered_frame_streamed(api, live_session, settings):
    url = f"/api/sessions/{live_session.id}/variables/df/rows.csv"
    response = api.get(url, {"filter": "anchorage"})
    assert response.status_code == 200 and response.streaming
    assert response["Content-Disposition"] == 'attachment; filename="df.csv"'
    lines = list(csv.reader(io.StringIO(async_to_sync(read_all)(response.streaming_content).decode())))
    assert lines == [["index", "id", "city"]] + [[str(i), str(i), "Anchorage"] for i in (5, 849, 1693, 2537)]
    settings.ANALYST_GRID_CSV_MAX_BYTES = 1000
    too_large = api.get(url)
    assert too_large.status_code == 413 and too_large.json()["error"]["code"] == "csv_too_large"


def test_unknown_tables_and_bad_parameters_are_clear_errors(api, live_session):
    base = f"/api/sessions/{live_session.id}/variables"
    for name in ("missing", "pd"):
        response = api.get(f"{base}/{name}/rows")
        assert response.status_code == 404 and response.json()["error"]["code"] == "not_a_table"
    for params in ({"limit": "0"}, {"limit": "501"}, {"offset": "-1"}, {"sort": "nope"}, {"token": "zz"}):
        response = api.get(f"{base}/df/rows", params)
        assert response.status_code == 400, params
        assert response.json()["error"]["code"] == "invalid_request"


def test_while_a_turn_runs_the_grid_is_told_to_wait(api, live_session, alice):
    Turn.objects.create(
        session=live_session, requested_by=alice, kind=Turn.Kind.CELL, input="x", status=Turn.Status.RUNNING
    )
    for suffix in ("rows", "rows.csv"):
        response = api.get(f"/api/sessions/{live_session.id}/variables/df/{suffix}")
        assert response.status_code == 409 and response.json()["error"]["code"] == "kernel_busy"


def test_a_stranger_gets_404(stranger_api, live_session):
    assert stranger_api.get(f"/api/sessions/{live_session.id}/variables/df/rows").status_code == 404
    assert stranger_api.get(f"/api/sessions/{live_session.id}/variables/df/rows.csv").status_code == 404
