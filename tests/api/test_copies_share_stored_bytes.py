"""A fork, a branch and a run on another file share the stored uploads and charts of the session they
copy: under a small storage limit they are made, nothing is stored twice, and the limit counts each
stored file once. Deleting a session, or replacing or deleting an upload, frees its bytes only when
no copy still names them."""

from __future__ import annotations

import json

import pytest
from django.core.files.base import ContentFile

from analyst.accounts import limits
from analyst.models import AnalysisSession, Artifact, DataFile, Turn
from analyst.realtime import events
from tests.api.conftest import stored_files, upload

CSV = b"region,amount\n" + b"north,1\n" * 125  # 1,014 bytes
CHART = b"\x89PNG\r\n\x1a\n" + bytes(492)  # 500 bytes


@pytest.fixture
def analysed(api, session, alice, media, settings):
    """Alice's session: an upload, a question whose answer read it and drew a chart, under a
    storage limit that holds it about twice (4 copies of it would not fit)."""
    settings.ANALYST_LIMIT_STORED_BYTES = 3 << 10
    response = upload_file(api, session)
    assert response.status_code == 202, response.content
    turn = Turn.objects.create(
        session=session, requested_by=alice, kind=Turn.Kind.CHAT, input="Sum it", status=Turn.Status.DONE
    )
    events.append(session.id, "user_message", {"text": "Sum it"}, turn=turn)
    events.append(session.id, "cell", {"code": "sales = pd.read_csv('data/sales.csv')"}, turn=turn)
    chart = Artifact(session=session, mime_type="image/png", size=len(CHART))
    chart.file.save("result.png", ContentFile(CHART))
    events.append(session.id, "result", {"artifacts": {"image/png": str(chart.id)}}, turn=turn)
    DataFile.objects.filter(session=session).update(
        placement=DataFile.Placement.READY, description=table("region", "amount")
    )
    return session


def upload_file(api, session, name: str = "sales.csv", content: bytes = CSV):
    return upload(api, session, name, content)


def table(*names: str) -> dict:
    columns = [{"name": name, "dtype": "object", "nulls": 0, "samples": []} for name in names]
    return {"format": "csv", "tables": [{"path": "", "error": None, "columns": columns}]}


def fork(api, session) -> AnalysisSession:
    response = api.post(f"/api/sessions/{session.id}/fork")
    assert response.status_code == 201, response.content
    return AnalysisSession.objects.get(id=response.json()["id"])


def content_of(session) -> bytes:
    with session.files.get().stored.open("rb") as stored:
        return stored.read()


def test_four_forks_under_a_3_kib_limit_store_and_count_the_upload_once(api, analysed, alice, media):
    forks = [fork(api, analysed) for _ in range(4)]
    # The old code copied each upload and chart: 5 of each stored, 7,570 bytes counted of 3 KiB.
    assert len(stored_files(media)) == 2
    assert limits.stored_bytes(alice) == len(CSV) + len(CHART)
    for each in forks:
        assert content_of(each) == CSV
        chart = each.artifacts.get()
        assert b"".join(api.get(f"/api/artifacts/{chart.id}").streaming_content) == CHART
    assert upload_file(api, analysed, "more.csv", CSV).status_code == 202  # 2.5 KiB of 3 KiB
    refused = upload_file(api, analysed, "even_more.csv", CSV)
    assert refused.status_code == 507 and refused.json()["error"]["code"] == "storage_limit"
    assert "(they take 2.5 KiB)" in refused.json()["error"]["message"]


def test_deleting_the_source_keeps_what_its_forks_name_and_the_last_copy_frees_it(
    api, analysed, alice, media, django_capture_on_commit_callbacks
):
    first, second = fork(api, analysed), fork(api, analysed)
    assert len(stored_files(media)) == 2
    with django_capture_on_commit_callbacks(execute=True):
        assert api.delete(f"/api/sessions/{analysed.id}").status_code == 200
    assert len(stored_files(media)) == 2 and content_of(first) == CSV
    assert limits.stored_bytes(alice) == len(CSV) + len(CHART)
    with django_capture_on_commit_callbacks(execute=True):
        assert api.delete(f"/api/sessions/{first.id}").status_code == 200
    assert content_of(second) == CSV
    with django_capture_on_commit_callbacks(execute=True):
        assert api.delete(f"/api/sessions/{second.id}").status_code == 200
    assert stored_files(media) == [] and limits.stored_bytes(alice) == 0


def test_an_upload_replaced_or_deleted_in_the_source_stays_in_its_fork(
    api, analysed, alice, media, django_capture_on_commit_callbacks
):
    copy = fork(api, analysed)
    assert len(stored_files(media)) == 2
    newer = CSV.replace(b"north", b"south")
    with django_capture_on_commit_callbacks(execute=True):
        assert upload_file(api, analysed, "sales.csv", newer).status_code == 202
    assert content_of(copy) == CSV and content_of(analysed) == newer
    assert limits.stored_bytes(alice) == 2 * len(CSV) + len(CHART)  # now two different files
    with django_capture_on_commit_callbacks(execute=True):
        file_id = copy.files.get().id
        assert api.delete(f"/api/sessions/{copy.id}/files/{file_id}").status_code == 200
    assert sorted(p.read_bytes() for p in stored_files(media)) == sorted([newer, CHART])
    assert limits.stored_bytes(alice) == len(newer) + len(CHART)


def test_a_branch_under_the_limit_shares_the_upload(api, analysed, alice, media):
    question = analysed.turns.get()
    url = f"/api/sessions/{analysed.id}/turns/{question.id}/branch"
    for _ in range(3):
        response = api.post(url, {"content": "Sum it by region", "empty_kernel": True}, "application/json")
        assert response.status_code == 201, response.content
        assert content_of(AnalysisSession.objects.get(id=response.json()["id"])) == CSV
    assert len(stored_files(media)) == 2
    assert limits.stored_bytes(alice) == len(CSV) + len(CHART)


def test_runs_on_another_file_under_the_limit_share_the_uploads(api, analysed, alice, media):
    assert upload_file(api, analysed, "march.csv", CSV.replace(b"north", b"south")).status_code == 202
    march = analysed.files.get(name="march.csv")
    DataFile.objects.filter(id=march.id).update(
        placement=DataFile.Placement.READY, description=table("region", "amount")
    )
    original = analysed.files.get(name="sales.csv")
    body = json.dumps({"replace": original.id, "with": march.id})
    for _ in range(3):
        response = api.post(f"/api/sessions/{analysed.id}/rerun", body, "application/json")
        assert response.status_code == 201, response.content
        target = AnalysisSession.objects.get(id=response.json()["id"])
        placed = target.files.get()
        assert placed.path == "data/sales.csv" and placed.stored.name == march.stored.name
        target.turns.update(status=Turn.Status.DONE)
    assert len(stored_files(media)) == 3
    assert limits.stored_bytes(alice) == 2 * len(CSV) + len(CHART)
