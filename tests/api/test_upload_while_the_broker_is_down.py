"""An upload while the broker (Redis) is unreachable is kept and said so (503 JSON, not an HTML
500): the reconciler sends its placement once the broker answers again, once; and a placement
claimed by one delivery is not run by a second while it lasts."""

from datetime import timedelta

import pytest
from django.utils import timezone

from analyst import dispatch
from analyst.models import DataFile
from analyst.turns import reconciler
from analyst.uploads import placement_queue
from tests.api.conftest import stored_files, upload
from tests.celery_sends import record_sends

pytestmark = pytest.mark.django_db(transaction=True)  # on_commit must run

CSV = b"region,sales\nnorth,10\nsouth,7\n"


def test_an_upload_while_the_broker_is_down_is_kept_and_placed_once_it_is_back(
    api, session, media, broker_down, monkeypatch
):
    response = upload(api, session, "sales.csv", CSV)
    assert response.status_code == 503
    body = response.json()
    assert body["error"]["code"] == "queue_unavailable"
    assert "no need to upload it again" in body["error"]["message"]
    data_file = DataFile.objects.get(id=body["file"]["id"])
    assert (data_file.placement, data_file.placement_due) == (DataFile.Placement.PLACING, None)
    assert [p.read_bytes() for p in stored_files(media)] == [CSV], "our copy is kept"

    DataFile.objects.filter(id=data_file.id).update(uploaded_at=timezone.now() - timedelta(seconds=10))
    assert reconciler.reconcile()["placement_resent"] == 0, "nothing is sent while the broker is down"

    monkeypatch.undo()  # the broker answers again: record what the real publish would send
    sent = record_sends(monkeypatch, dispatch.PLACE_FILE)
    assert reconciler.reconcile()["placement_resent"] == 1
    assert reconciler.reconcile()["placement_resent"] == 0, "sent again only when overdue"
    assert sent == [data_file.id]


def test_a_retry_while_the_broker_is_down_says_so(api, session, media, broker_down):
    data_file = DataFile.objects.create(
        session=session, name="a.csv", path="data/a.csv", size=1, placement=DataFile.Placement.FAILED
    )
    response = api.post(f"/api/sessions/{session.id}/files/{data_file.id}/retry")
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "queue_unavailable"
    data_file.refresh_from_db()
    assert data_file.placement == DataFile.Placement.PLACING, "it will be placed when the broker is back"


def test_a_second_delivery_of_a_running_placement_does_not_claim_it(session):
    data_file = DataFile.objects.create(session=session, name="a.csv", path="data/a.csv", size=1)
    DataFile.objects.filter(id=data_file.id).update(placement_due=timezone.now())
    assert placement_queue.claim(data_file.id), "the first delivery takes it"
    assert not placement_queue.claim(data_file.id), "a duplicate finds it taken"
    placement_queue.retry_at(data_file.id, 0)
    assert placement_queue.claim(data_file.id), "the retry, once due, takes it again"
