"""Redis goes down while the worker holds a task (an upload being placed, a turn running a cell): the
worker lives through the outage and finishes that work, and an upload made meanwhile (503, kept) is
placed once Redis is back. Before, Celery 5.7 died closing its lost connection ("Unrecoverable
error", restoring the unacknowledged message it held), so nothing sent while Redis was down ever
ran. Web and worker use a Redis of the test's own, stopped, then started again empty."""

import time

from analyst.models import DataFile
from tests.api.conftest import upload
from tests.fakes.model_server import anthropic_text, anthropic_tool_call
from tests.faults.turns.workers import ask, assert_log_invariants, new_session, wait_for_event
from tests.worker_process import CeleryWorkerProcess

CSV = b"region,sales\nnorth,10\nsouth,7\n"
OUTAGE = 6  # seconds: the worker's reconciler passes several times meanwhile


def until_received(worker: CeleryWorkerProcess, task: str) -> None:
    """Until the worker has taken a message of ``task`` (it holds it until the task ends)."""
    deadline = time.monotonic() + 30
    while f"{task}[" not in worker.read_log():
        assert time.monotonic() < deadline, f"the worker took no {task}"
        time.sleep(0.02)


def upload_while_down(client, session) -> int:
    response = upload(client, session, "sales.csv", CSV)
    assert response.status_code == 503, response.content
    assert response.json()["error"]["code"] == "queue_unavailable"
    return response.json()["file"]["id"]


def said(worker: CeleryWorkerProcess) -> str:
    """The worker's log lines, without tracebacks."""
    return "\n".join(line for line in worker.read_log().splitlines() if line.startswith("[20"))[-3000:]


def wait_until_placed(worker: CeleryWorkerProcess, *file_ids: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while DataFile.objects.filter(id__in=file_ids, placement=DataFile.Placement.PLACING).exists():
        assert worker.process is not None and worker.process.poll() is None, f"it died:\n{said(worker)}"
        assert time.monotonic() < deadline, "still placing once Redis was back"
        time.sleep(0.2)
    files = DataFile.objects.filter(id__in=file_ids)
    assert {f.placement for f in files} == {"ready"}, [(f.name, f.placement_error) for f in files]


def test_an_upload_made_while_redis_is_down_is_placed_though_redis_went_down_mid_placement(
    start_worker, fault_model, owner_api, web_broker_on
):
    redis = web_broker_on
    client, alice = owner_api
    session = new_session(alice)
    worker = start_worker(fault_model, REDIS_URL=redis.url)
    first = upload(client, session, "first.csv", CSV)
    assert first.status_code == 202, first.content
    until_received(worker, "analyst.tasks.place_file")

    redis.stop()  # the first file is being placed: its sandbox made, the file written and read
    waiting = upload_while_down(client, session)
    time.sleep(OUTAGE)
    redis.start()
    wait_until_placed(worker, first.json()["file"]["id"], waiting)


def test_a_turn_running_when_redis_goes_down_ends_and_an_upload_made_meanwhile_is_placed(
    start_worker, fault_model, owner_api, web_broker_on
):
    redis = web_broker_on
    client, alice = owner_api
    session = new_session(alice)
    worker = start_worker(fault_model, REDIS_URL=redis.url)
    fault_model.script(
        anthropic_tool_call("run_python", {"code": "import time\ntime.sleep(3)\nprint('slept')"}),
        anthropic_text("Done."),
    )
    turn = ask(client, session, "Take a moment")
    wait_for_event(session, turn, "tool_call")

    redis.stop()  # mid-cell
    waiting = upload_while_down(client, session)
    time.sleep(OUTAGE)
    redis.start()
    wait_until_placed(worker, waiting)
    assert wait_for_event(session, turn, timeout=30)[-1]["type"] == "turn_done"
    assert_log_invariants(session)
