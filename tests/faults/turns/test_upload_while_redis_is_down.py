"""An upload made while Redis is down, which comes back empty: the file is kept (503 JSON, "no
need to upload it again") and placed in the sandbox once Redis is back, by a real worker that
lived through the outage, with no action of the user's."""

import time

from analyst.models import DataFile
from tests.api.conftest import upload
from tests.faults.turns.workers import new_session

CSV = b"region,sales\nnorth,10\nsouth,7\n"


def wait_for_placement(file_id: int, timeout: float) -> DataFile:
    deadline = time.monotonic() + timeout
    while True:
        data_file = DataFile.objects.get(id=file_id)
        if data_file.placement != DataFile.Placement.PLACING or time.monotonic() > deadline:
            return data_file
        time.sleep(0.2)


def test_an_upload_while_redis_is_down_is_placed_once_it_is_back(
    start_worker,
    fault_model,
    owner_api,
    web_broker_on,
):
    redis = web_broker_on
    client, alice = owner_api
    session = new_session(alice)
    start_worker(fault_model, REDIS_URL=redis.url)

    redis.stop()
    response = upload(client, session, "sales.csv", CSV)
    assert response.status_code == 503, response.content
    assert response.json()["error"]["code"] == "queue_unavailable"
    file_id = response.json()["file"]["id"]

    time.sleep(8)  # the worker's reconciler passes, several times, while Redis is down
    redis.start()  # the same port, nothing kept
    placed = wait_for_placement(file_id, timeout=60)
    assert placed.placement == DataFile.Placement.READY, (placed.placement, placed.placement_error)
