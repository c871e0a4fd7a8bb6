"""Run an analysis again on another file (POST /api/sessions/<id>/rerun): a new session holds the
new file under the original's path, and its first turn runs the same cells in order in a fresh
kernel, so they give the new file's numbers; the source session is left as it was."""

from __future__ import annotations

import time

from analyst.models import AnalysisSession, DataFile, Turn
from tests.integration.conftest import wait_for
from tests.integration.test_resume_and_fork import _csv, run_cell
from tests.printed import printed_in_last_turn

SALES = b"region,amount\nnorth,10\nsouth,32\neast,7\n"
MARCH = b"region,amount,note\nnorth,100,\nsouth,320,peak\neast,70,\nwest,5,\n"
READ = "import pandas as pd\nsales = pd.read_csv('data/sales.csv')"
TOTAL = "print('total', int(sales.amount.sum()), 'rows', len(sales))"


def uploaded(api, session, name: str, content: bytes) -> DataFile:
    response = api.post(f"/api/sessions/{session.id}/files", {"file": _csv(name, content)})
    assert response.status_code == 202, response.content
    file_id = response.json()["file"]["id"]
    deadline = time.monotonic() + 90
    while not session.events.filter(type="file_added", payload__id=file_id).exists():
        assert time.monotonic() < deadline, f"{name} was not described"
        time.sleep(0.05)
    return DataFile.objects.get(id=file_id)


def analysed(api, session) -> tuple[DataFile, DataFile]:
    """A session that read sales.csv and totalled it, with march.csv uploaded beside it."""
    sales = uploaded(api, session, "sales.csv", SALES)
    run_cell(api, session, READ)
    run_cell(api, session, TOTAL)
    AnalysisSession.objects.filter(id=session.id).update(title="Sales")  # not save(): next_seq moves on
    session.refresh_from_db()
    return sales, uploaded(api, session, "march.csv", MARCH)


def test_the_same_cells_on_a_file_with_the_same_columns_give_its_numbers(stack, api, session):
    sales, march = analysed(api, session)
    before = session.events.count()

    response = api.post(
        f"/api/sessions/{session.id}/rerun", {"replace": sales.id, "with": march.id}, "application/json"
    )
    assert response.status_code == 201, response.content
    answer = response.json()
    assert answer["title"] == "Sales — on march.csv" and answer["extra_columns"] == ["note"]
    assert answer["url"] == f"/sessions/{answer['id']}/"
    rerun = AnalysisSession.objects.get(id=answer["id"])
    assert rerun.owner == session.owner and rerun.model == session.model

    log = wait_for(rerun)
    notice = log[0]["payload"]
    assert (notice["code"], notice["from"], notice["path"]) == ("rerun", str(session.id), "data/sales.csv")
    assert "It has columns the original has not: note" in notice["text"]
    assert log[-1]["type"] == "turn_done", [e["type"] for e in log]
    assert [e["payload"]["code"] for e in log if e["type"] == "cell"] == [READ, TOTAL]
    assert "".join(e["payload"]["text"] for e in log if e["type"] == "stdout") == "total 495 rows 4\n"
    assert any(e["payload"].get("code") == "replay_done" for e in log)
    assert Turn.objects.get(id=answer["turn"]).kind == Turn.Kind.REPLAY
    assert stack.requests == []  # nothing failed: the model is not called

    # Its files: the new one where the original was, described there; the rest as they were.
    files = {f.path: f for f in rerun.files.all()}
    assert set(files) == {"data/sales.csv"}
    assert files["data/sales.csv"].name == "march.csv" and files["data/sales.csv"].rows == 4

    # The source is as it was: its file, its events, its kernel.
    assert session.events.count() == before
    log = run_cell(api, session, TOTAL)
    assert log[-2]["type"] != "error"
    assert printed_in_last_turn(log) == "total 49 rows 3\n"
