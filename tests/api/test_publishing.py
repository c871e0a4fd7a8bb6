"""Publishing a session's report (POST/GET/DELETE /api/sessions/<id>/publish) and reading it at
/r/<token>: the owner's alone to publish; the latest done run shown, its versions listed and
the figures that changed since the one before; a revoked or unknown token is a 404; a report
that requires signing in sends an anonymous reader to sign in. The runs here are written as a
run's worker writes them (tests/integration/test_published_reports.py runs real ones)."""

from __future__ import annotations

import datetime
import uuid

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from analyst.models import AnalysisSession, ApiToken, Run, Turn
from analyst.realtime import events
from analyst.sessions import exports

TABLE = "application/vnd.dataresource+json"


def publish(client, session, **body):
    return client.post(f"/api/sessions/{session.id}/publish", body, "application/json")


def cell(session, turn, code, printed, *, index=None, of=2, table=None):
    payload = {"code": code} | ({"replay": {"index": index, "of": of, "by": "user"}} if index else {})
    events.append(session.id, "cell", payload, turn=turn)
    events.append(session.id, "stdout", {"text": printed}, turn=turn)
    if table is not None:
        events.append(session.id, "result", {"data": {"text/plain": "a table", TABLE: table}}, turn=turn)
    events.append(session.id, "cell_done", {"failed": False}, turn=turn)


def done_run(source, owner, parameters, outputs, *, minutes, status=Turn.Status.DONE, code="replay_done"):
    """A run of ``source`` that ended ``minutes`` from now, its cells printing ``outputs``."""
    target = AnalysisSession.objects.create(owner=owner, title=f"{source.title} — run")
    finished = timezone.now() + datetime.timedelta(minutes=minutes)
    turn = Turn.objects.create(
        session=target,
        requested_by=owner,
        kind=Turn.Kind.REPLAY,
        input="{}",
        status=status,
        finished_at=finished,
    )
    cell(target, turn, "# Parameters of this run", "")  # the injected values: no index
    for index, printed in enumerate(outputs, start=1):
        cell(target, turn, f"cell_{index}()", printed, index=index, of=len(outputs))
    events.append(target.id, "notice", {"text": "done", "code": code}, turn=turn)
    run = Run.objects.create(
        source=source, session=target, turn=turn, requested_by=owner, parameters=parameters
    )
    Run.objects.filter(id=run.id).update(created_at=finished)
    return run


@pytest.fixture
def analysis(session):
    session.title = "Weekly sales"
    session.save()
    turn = Turn.objects.create(session=session, requested_by=session.owner, kind=Turn.Kind.CELL, input="")
    cell(session, turn, "n = 3", "total 1,234 from 7 stores\n")
    return session


def test_publishing_returns_the_link_once_and_revoking_kills_it(api, analysis):
    first = publish(api, analysis)
    assert first.status_code == 201, first.content
    body = first.json()
    token = body["token"]
    assert body["url"] == f"/r/{token}" and len(token) >= 40
    assert body["sign_in_required"] is False and body["versions"] == 0

    again = publish(api, analysis, sign_in_required=True)
    assert again.status_code == 200
    assert again.json()["token"] == token and again.json()["sign_in_required"] is True
    assert api.get(f"/api/sessions/{analysis.id}/publish").json()["token"] == token

    assert api.delete(f"/api/sessions/{analysis.id}/publish").status_code == 204
    assert api.get(f"/api/sessions/{analysis.id}/publish").status_code == 404
    assert api.delete(f"/api/sessions/{analysis.id}/publish").status_code == 404
    assert Client().get(f"/r/{token}").status_code == 404
    assert Client().get(f"/r/{token}.json").status_code == 404

    renewed = publish(api, analysis)
    assert renewed.status_code == 201 and renewed.json()["token"] != token


def test_a_bad_body_is_refused(api, analysis):
    refused = publish(api, analysis, sign_in_required="yes")
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "invalid_request"
    assert api.get(f"/api/sessions/{analysis.id}/publish").status_code == 404


def test_a_stranger_can_neither_publish_nor_see_nor_revoke(api, stranger_api, analysis):
    token = publish(api, analysis).json()["token"]
    for response in (
        publish(stranger_api, analysis),
        stranger_api.get(f"/api/sessions/{analysis.id}/publish"),
        stranger_api.delete(f"/api/sessions/{analysis.id}/publish"),
    ):
        assert response.status_code == 404
        assert response.json() == {"error": {"code": "not_found", "message": "no such session"}}
    assert publish(stranger_api, AnalysisSession(id=uuid.uuid4())).status_code == 404
    assert api.get(f"/api/sessions/{analysis.id}/publish").json()["token"] == token


def test_an_unknown_token_is_a_404(db):
    assert Client().get("/r/not-a-token").status_code == 404
    assert Client().get("/r/not-a-token.json").status_code == 404


def test_before_any_run_the_page_is_the_sessions_own_report(api, analysis):
    token = publish(api, analysis).json()["token"]
    page = Client().get(f"/r/{token}")
    assert page.status_code == 200
    assert page["Content-Security-Policy"] == exports.report_policy()
    assert "sandbox" in page["Content-Security-Policy"]
    html = page.content.decode()
    assert "Weekly sales" in html and "total 1,234 from 7 stores" in html
    assert "No run of this analysis has finished yet" in html
    assert "<script" not in html  # no figure: no script at all

    data = Client().get(f"/r/{token}.json").json()
    assert data["version"] == {"run": None, "finished_at": None, "parameters": {}}
    assert data["outputs"] == [{"cell": 1, "text": "total 1,234 from 7 stores\n"}]


def test_the_latest_done_run_is_shown_with_its_versions_and_what_changed(api, alice, analysis):
    token = publish(api, analysis).json()["token"]
    older = done_run(analysis, alice, {"week": 1}, ["total 1,234 from 7 stores\n", "mean 3.5\n"], minutes=1)
    newer = done_run(analysis, alice, {"week": 2}, ["total 1,310 from 7 stores\n", "mean 3.5\n"], minutes=2)
    done_run(analysis, alice, {"week": 3}, ["total 9,999 from 7 stores\n"], minutes=3, code="replay_stopped")
    done_run(
        analysis, alice, {"week": 4}, ["total 8,888 from 7 stores\n"], minutes=4, status=Turn.Status.FAILED
    )
    assert api.get(f"/api/sessions/{analysis.id}/publish").json()["versions"] == 2

    html = Client().get(f"/r/{token}").content.decode()
    report = html.split("</section>", 1)[1]  # below the masthead
    assert "total 1,310 from 7 stores" in report and "1,234" not in report
    assert "with week = 2" in html
    changes = html.split('data-testid="published-changes">')[1].split("</ul>")[0]
    assert changes.count("<li>") == 1 and "cell 1: 1,234 → 1,310" in changes
    versions = html.split('data-testid="published-versions">')[1].split("</ol>")[0]
    assert versions.index(f"/r/{token}?version={newer.id}") < versions.index(f"/r/{token}?version={older.id}")
    assert "9,999" not in html and "8,888" not in html  # runs that did not end done are no versions

    first = Client().get(f"/r/{token}?version={older.id}").content.decode()
    assert "total 1,234 from 7 stores" in first and "This is the first run." in first
    assert Client().get(f"/r/{token}?version={uuid.uuid4()}").status_code == 404
    assert Client().get(f"/r/{token}?version=nonsense").status_code == 404

    data = Client().get(f"/r/{token}.json").json()
    assert data["session"] == str(analysis.id) and data["title"] == "Weekly sales"
    assert data["version"]["run"] == str(newer.id) and data["version"]["parameters"] == {"week": 2}
    assert data["outputs"] == [
        {"cell": 1, "text": "total 1,310 from 7 stores\n"},
        {"cell": 2, "text": "mean 3.5\n"},
    ]


def test_tables_travel_as_the_grid_gets_them(api, alice, analysis):
    token = publish(api, analysis).json()["token"]
    run = done_run(analysis, alice, {}, ["shown\n"], minutes=1)
    table = {
        "schema": {"fields": [{"name": "index", "type": "integer"}, {"name": "sales", "type": "number"}],
                   "primaryKey": ["index"]},
        "data": [{"index": 0, "sales": 1.5}, {"index": 1, "sales": None}],
        "total_rows": 2, "total_columns": 1,
    }  # fmt: skip
    cell(run.session, run.turn, "frame", "", index=2, of=2, table=table)
    tables = Client().get(f"/r/{token}.json").json()["tables"]
    assert tables == [
        {
            "cell": 2,
            "columns": table["schema"]["fields"],
            "rows": table["data"],
            "total_rows": 2,
            "total_columns": 1,
        }
    ]


def test_a_report_requiring_sign_in_sends_anonymous_readers_to_sign_in(api, analysis):
    token = publish(api, analysis, sign_in_required=True).json()["token"]
    anonymous = Client().get(f"/r/{token}")
    assert anonymous.status_code == 302
    assert anonymous["Location"] == f"/accounts/login/?next=/r/{token}"
    assert Client().get(f"/r/{token}.json").status_code == 401

    reader = Client()
    reader.force_login(get_user_model().objects.create_user("bob"))  # any user who signed in
    assert reader.get(f"/r/{token}").status_code == 200
    assert reader.get(f"/r/{token}.json").json()["title"] == "Weekly sales"
    # A dashboard pulls the data with an API token (any user's); a wrong one is refused.
    _, secret = ApiToken.issue(get_user_model().objects.create_user("dashboard"))
    pulled = Client(HTTP_AUTHORIZATION=f"Bearer {secret}").get(f"/r/{token}.json")
    assert pulled.status_code == 200 and pulled.json()["title"] == "Weekly sales"
    assert Client(HTTP_AUTHORIZATION="Bearer not-a-token").get(f"/r/{token}.json").status_code == 401
