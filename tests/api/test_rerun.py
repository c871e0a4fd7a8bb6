"""POST /api/sessions/<id>/rerun {"replace", "with"}: a new session on another file with the same
columns (201); 404 for a stranger or a file not theirs, 409 while a turn runs or the new file is
being read, 422 naming the missing columns, 400 for anything that is not two upload ids."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile

from analyst.models import AnalysisSession, DataFile, Turn
from analyst.realtime import events


def table(*names: str) -> dict:
    columns = [{"name": name, "dtype": "int64", "nulls": 0, "samples": []} for name in names]
    return {"format": "csv", "tables": [{"path": "", "error": None, "columns": columns}]}


def upload(session, name: str, *columns: str, placement: str = "ready") -> DataFile:
    data_file = DataFile(
        session=session,
        name=name,
        path=f"data/{name}",
        size=4,
        placement=placement,
        description=table(*columns),
    )
    data_file.stored.save(name, ContentFile(b"a\n1\n"))
    return data_file


@pytest.fixture
def analysed(session, media):
    events.append(session.id, "cell", {"code": "import pandas as pd\nsales = pd.read_csv('data/sales.csv')"})
    return upload(session, "sales.csv", "region", "amount")


def rerun(client, session, body):
    return client.post(f"/api/sessions/{session.id}/rerun", json.dumps(body), "application/json")


def test_the_owner_gets_a_new_session_running_the_cells_on_the_new_file(
    api, session, analysed, django_capture_on_commit_callbacks
):
    march = upload(session, "march.csv", "amount", "region", "note")
    with django_capture_on_commit_callbacks(execute=True):
        response = rerun(api, session, {"replace": analysed.id, "with": march.id})
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["title"] == "Untitled analysis — on march.csv" and body["extra_columns"] == ["note"]
    target = AnalysisSession.objects.get(id=body["id"])
    placed = target.files.get()
    assert (placed.name, placed.path, placed.placement) == ("march.csv", "data/sales.csv", "placing")
    turn = Turn.objects.get(id=body["turn"], session=target)
    plan = json.loads(turn.input)
    assert turn.kind == Turn.Kind.REPLAY and plan["restart"] is False and plan["repair"] is True
    assert [cell["code"] for cell in plan["cells"]] == [
        "import pandas as pd\nsales = pd.read_csv('data/sales.csv')"
    ]
    assert [e.payload["code"] for e in target.events.order_by("seq")] == ["rerun", "replay_queued"]


def test_a_stranger_gets_404(stranger_api, session, analysed):
    march = upload(session, "march.csv", "region", "amount")
    response = rerun(stranger_api, session, {"replace": analysed.id, "with": march.id})
    assert response.status_code == 404
    assert AnalysisSession.objects.count() == 1


def test_someone_elses_file_is_404(api, session, analysed):
    mallory = get_user_model().objects.create_user("mallory2")
    theirs = AnalysisSession.objects.create(owner=mallory, model="anthropic/claude-test")
    their_file = upload(theirs, "march.csv", "region", "amount")
    response = rerun(api, session, {"replace": analysed.id, "with": their_file.id})
    assert response.status_code == 404 and AnalysisSession.objects.count() == 2


def test_a_file_of_another_session_of_mine_may_stand_in(api, session, alice, analysed):
    mine = AnalysisSession.objects.create(owner=alice, model="anthropic/claude-test")
    march = upload(mine, "march.csv", "region", "amount")
    response = rerun(api, session, {"replace": analysed.id, "with": march.id})
    assert response.status_code == 201 and response.json()["extra_columns"] == []


def test_a_running_turn_is_409(api, session, alice, analysed):
    march = upload(session, "march.csv", "region", "amount")
    Turn.objects.create(session=session, requested_by=alice, kind=Turn.Kind.CHAT, input="x", status="running")
    response = rerun(api, session, {"replace": analysed.id, "with": march.id})
    assert response.status_code == 409 and response.json()["error"]["code"] == "turn_running"


def test_a_file_still_being_read_is_409(api, session, analysed):
    march = upload(session, "march.csv", placement="placing")
    response = rerun(api, session, {"replace": analysed.id, "with": march.id})
    assert response.status_code == 409 and response.json()["error"]["code"] == "still_reading"


def test_missing_columns_are_422_and_named(api, session, analysed):
    other = upload(session, "other.csv", "region", "total")
    response = rerun(api, session, {"replace": analysed.id, "with": other.id})
    assert response.status_code == 422
    assert response.json()["missing"] == ["amount"] and response.json()["extra"] == ["total"]
    assert AnalysisSession.objects.count() == 1 and not Turn.objects.exists()


@pytest.mark.parametrize(
    "body", [{}, {"replace": "1", "with": 2}, {"replace": 1}, {"replace": True, "with": 2}, [], "same"]
)
def test_anything_but_two_upload_ids_is_400(api, session, analysed, body):
    if body == "same":
        body = {"replace": analysed.id, "with": analysed.id}
    response = rerun(api, session, body)
    assert response.status_code == 400, response.content
    assert AnalysisSession.objects.count() == 1


def test_nothing_to_run_is_400(api, session, media):
    sales = upload(session, "sales.csv", "region")
    march = upload(session, "march.csv", "region")
    response = rerun(api, session, {"replace": sales.id, "with": march.id})
    assert response.status_code == 400 and response.json()["error"]["code"] == "nothing_to_run"
