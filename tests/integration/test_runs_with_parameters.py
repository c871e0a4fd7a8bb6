"""Runs of an analysis with parameters (POST /api/sessions/<id>/runs): the analysis replayed in a
fresh kernel, in a session of its own, with the run's values set right after the marked
parameters cell and returned by parameter() calls, as papermill injects them; a failing cell
ends the run as failed; the runs' sessions stay out of the owner's lists."""

from __future__ import annotations

import time

from django.utils import timezone

from analyst.models import AnalysisSession, Run
from analyst.realtime import events
from tests.integration.test_resume_and_fork import run_cell
from tests.printed import printed

PARAMETERS_CELL = "threshold = 5\nlabel = 'small'"
USES_THEM = "print(label, sum(x for x in range(20) if x > threshold))"
CALLS_ONE = "since = parameter('since', '2024-01-01')\nprint('since', since)"


def finished_run(api, run_id: str, timeout: float = 120) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        response = api.get(f"/api/runs/{run_id}")
        assert response.status_code == 200, response.content
        run = response.json()
        if run["status"] in ("done", "failed"):
            return run
        assert time.monotonic() < deadline, f"the run did not end: {run['status']}"
        time.sleep(0.1)


def test_a_run_sets_its_values_after_the_parameters_cell(stack, api, session):
    for code in (PARAMETERS_CELL, USES_THEM, CALLS_ONE):
        run_cell(api, session, code)
    log = events.after(session.id, 0)
    assert printed(log) == "small 175\nsince 2024-01-01\n"  # by hand: the defaults

    marked = api.put(f"/api/sessions/{session.id}/parameters", {"code": PARAMETERS_CELL}, "application/json")
    assert marked.status_code == 200, marked.content
    assert marked.json()["parameters"] == [
        {"name": "threshold", "type": "int", "default": 5, "source": "cell"},
        {"name": "label", "type": "str", "default": "small", "source": "cell"},
        {"name": "since", "type": "date", "default": "2024-01-01", "source": "call"},
    ]

    values = {"threshold": 15, "label": "large", "since": "today - 7 days"}
    started = api.post(f"/api/sessions/{session.id}/runs", {"parameters": values}, "application/json")
    assert started.status_code == 202, started.content
    assert started.json()["status"] in ("queued", "running")
    run = finished_run(api, started.json()["id"])

    week_ago = (timezone.localdate() - timezone.timedelta(days=7)).isoformat()
    assert run["status"] == "done", run
    assert run["parameters"] == {"threshold": 15, "label": "large", "since": week_ago}
    assert printed(run["events"]) == f"large 70\nsince {week_ago}\n"
    assert [cell["index"] for cell in run["cells"]] == [None, 1, None, 2, 3]  # the values: set twice
    assert [cell["failed"] for cell in run["cells"]] == [False] * 5
    assert run["cells"][2]["code"] == "# Parameters of this run\nthreshold = 15\nlabel = 'large'"
    assert stack.requests == []  # the model is not called

    # The source is untouched; the run's session is listed under the source's runs, not among sessions.
    assert printed(events.after(session.id, 0)) == "small 175\nsince 2024-01-01\n"
    listed = api.get("/api/sessions").json()["sessions"]
    assert [s["id"] for s in listed] == [str(session.id)]
    runs = api.get(f"/api/sessions/{session.id}/runs").json()["runs"]
    assert [r["id"] for r in runs] == [run["id"]] and runs[0]["status"] == "done"


def test_a_failing_cell_ends_the_run_as_failed(stack, api, session):
    run_cell(api, session, "divisor = 2")
    run_cell(api, session, "print(10 // divisor)")
    api.put(f"/api/sessions/{session.id}/parameters", {"code": "divisor = 2"}, "application/json")

    started = api.post(f"/api/sessions/{session.id}/runs", {"parameters": {"divisor": 0}}, "application/json")
    run = finished_run(api, started.json()["id"])
    assert run["status"] == "failed"
    assert [cell["failed"] for cell in run["cells"]] == [False, False, False, True]
    stopped = [e["payload"]["text"] for e in run["events"] if e["payload"].get("code") == "replay_stopped"]
    assert stopped == [
        "Stopped at cell 2 of 2, which failed (ZeroDivisionError: integer division or modulo by zero)."
    ]


def test_runs_refuse_what_they_cannot_run(stack, api, session, alice):
    def start(body):
        return api.post(f"/api/sessions/{session.id}/runs", body, "application/json")

    nothing = start({"parameters": {}})
    assert nothing.status_code == 400 and nothing.json()["error"]["code"] == "nothing_to_run"
    run_cell(api, session, "n = 3\nprint(n)")
    refused = api.put(
        f"/api/sessions/{session.id}/parameters", {"code": "n = 3\nprint(n)"}, "application/json"
    )
    assert refused.status_code == 422 and "line 2 is not an assignment" in refused.json()["error"]["message"]
    unknown = start({"parameters": {"m": 1}})
    assert unknown.status_code == 400 and "unknown parameter 'm'" in unknown.json()["error"]["message"]
    no_file = start({"parameters": {}, "files": {"data/missing.csv": 1}})
    assert (
        no_file.status_code == 400 and "no file at 'data/missing.csv'" in no_file.json()["error"]["message"]
    )
    assert Run.objects.count() == 0 and AnalysisSession.objects.count() == 1
    assert api.get("/api/runs/00000000-0000-0000-0000-000000000000").status_code == 404
