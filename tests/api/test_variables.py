"""GET /api/sessions/<id>/variables and /variables/<name>: the owner sees the kernel's variables,
its memory and a table's first rows; a session without a running sandbox says so, no error."""

from __future__ import annotations

import pytest

from analyst.models import Turn

SETUP = "import pandas as pd\ndf = pd.DataFrame({'a': range(3376), 'b': ['<b>x</b>'] * 3376})\nn = 3\n"


@pytest.fixture
def live_session(session, sandbox, sandboxd, monkeypatch):
    monkeypatch.setenv("SANDBOXD_URL", sandboxd.url)
    monkeypatch.setenv("SANDBOXD_TOKEN", sandboxd.token)
    assert sandbox.run_code(SETUP).error is None
    session.sandbox_id = sandbox.sandbox_id
    session.save(update_fields=["sandbox_id"])
    return session


def test_the_owner_sees_the_variables_and_the_memory(api, live_session):
    body = api.get(f"/api/sessions/{live_session.id}/variables").json()
    assert body["status"] == "ready" and body["total"] == 2
    df, n = body["variables"]
    assert (df["name"], df["type"], df["shape"], df["table"]) == ("df", "DataFrame", [3376, 2], True)
    assert df["size"] > 3376 * 8
    assert (n["name"], n["type"], n["shape"], n["table"]) == ("n", "int", None, False)
    memory = body["memory"]
    assert 0 < memory["used"] < memory["limit"]


def test_a_table_comes_as_a_result_payload(api, live_session):
    response = api.get(f"/api/sessions/{live_session.id}/variables/df")
    assert response.status_code == 200
    body = response.json()
    resource = body["data"]["application/vnd.dataresource+json"]
    assert [f["name"] for f in resource["schema"]["fields"]] == ["index", "a", "b"]
    assert resource["total_rows"] == 3376 and len(resource["data"]) == 50
    assert resource["data"][2] == {"index": 2, "a": 2, "b": "<b>x</b>"}
    html = body["data"]["text/html"]
    assert html.startswith("<table") and "&lt;b&gt;x&lt;/b&gt;" in html and "<b>" not in html
    assert (body["total_rows"], body["total_columns"]) == (3376, 2)


def test_what_is_not_a_table_is_404(api, live_session):
    for name in ("n", "missing", "not-a-name"):
        response = api.get(f"/api/sessions/{live_session.id}/variables/{name}")
        assert response.status_code == 404, name
        assert response.json()["error"]["code"] == "not_a_table"


def test_while_a_turn_runs_the_kernel_is_not_asked(api, live_session, alice):
    Turn.objects.create(
        session=live_session, requested_by=alice, kind=Turn.Kind.CELL, input="x", status=Turn.Status.RUNNING
    )
    body = api.get(f"/api/sessions/{live_session.id}/variables").json()
    assert body["status"] == "busy" and body["variables"] == []
    assert body["memory"]["used"] > 0  # the kernel's state still shows
    preview = api.get(f"/api/sessions/{live_session.id}/variables/df")
    assert preview.status_code == 409 and preview.json()["error"]["code"] == "kernel_busy"


def test_no_sandbox_says_so(api, session, sandboxd, monkeypatch):
    monkeypatch.setenv("SANDBOXD_URL", sandboxd.url)
    monkeypatch.setenv("SANDBOXD_TOKEN", sandboxd.token)
    body = api.get(f"/api/sessions/{session.id}/variables").json()
    assert body == {"status": "none", "variables": [], "total": 0, "memory": None}
    session.sandbox_id = "0" * 32  # expired and reaped
    session.save(update_fields=["sandbox_id"])
    assert api.get(f"/api/sessions/{session.id}/variables").json()["status"] == "none"
    preview = api.get(f"/api/sessions/{session.id}/variables/df")
    assert preview.status_code == 409 and preview.json()["error"]["code"] == "no_kernel"


def test_interrupt_with_no_turn_running_does_nothing(api, live_session):
    response = api.post(f"/api/sessions/{live_session.id}/kernel/interrupt")
    assert response.status_code == 200 and response.json() == {"interrupted": False}
