"""An upload placed while sandboxd does not answer is tried again with backoff; one that still
fails ends visibly (an error event, the file marked failed) and its retry action places it."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from analyst import dispatch
from analyst.models import AnalysisSession, DataFile
from sandboxes import Sandbox
from tests.celery_sends import send_with
from tests.conftest import TEST_SETTINGS
from tests.integration.conftest import wait_for
from tests.sandboxd_process import SandboxdProcess, own_sandboxd_process
from tests.worker_process import CeleryWorkerProcess

CSV = b"region,units\nnorth,3\nsouth,5\n"


@pytest.fixture
def frozen_sandboxd() -> Iterator[SandboxdProcess]:
    """A sandboxd of this test's own, which the test stops (SIGSTOP) and lets go on (SIGCONT)."""
    with own_sandboxd_process(TEST_SETTINGS, prefix="sandboxd-placement-") as server:
        yield server
        assert server.process is not None
        server.process.send_signal(signal.SIGCONT)  # never leave it stopped for its clean-up


@pytest.fixture
def placing_worker(
    transactional_db: None,
    extra_worker: Callable[..., CeleryWorkerProcess],
    frozen_sandboxd: SandboxdProcess,
    monkeypatch: pytest.MonkeyPatch,
) -> Callable[..., CeleryWorkerProcess]:
    """A worker on that sandboxd, whose SDK waits 15 s for an answer; this test's placements go to it."""

    def start(*, tries: int) -> CeleryWorkerProcess:
        worker = extra_worker(
            DJANGO_SETTINGS_MODULE="tests.integration.placement_settings",
            TEST_PLACE_TRIES=str(tries),
            TEST_PLACE_BACKOFF="0.2",
            SANDBOXD_URL=frozen_sandboxd.url,
            SANDBOXD_TOKEN=frozen_sandboxd.token,
            # Long enough for a new kernel (the describer's context) to start on a busy machine.
            SANDBOXD_REQUEST_TIMEOUT="15",
        )
        send_with(monkeypatch, dispatch.PLACE_FILE, queue=worker.queues)
        return worker

    return start


def upload(api: Any, session: AnalysisSession) -> dict[str, Any]:
    sent = SimpleUploadedFile("sales.csv", CSV, content_type="text/csv")
    response = api.post(f"/api/sessions/{session.id}/files", {"file": sent})
    assert response.status_code == 202, response.content
    return response.json()["file"]


def wait_until(check: Callable[[], bool], what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"no {what} within {timeout}s"
        time.sleep(0.1)


def sandboxes_of(server: SandboxdProcess, session: AnalysisSession) -> list[str]:
    found = Sandbox.list({"session": str(session.id)}, url=server.url, token=server.token)
    return [info.sandbox_id for info in found]


@pytest.mark.slow
def test_a_placement_retries_until_sandboxd_answers_again(placing_worker, frozen_sandboxd, api, session):
    worker = placing_worker(tries=100)
    assert frozen_sandboxd.process is not None
    frozen_sandboxd.process.send_signal(signal.SIGSTOP)
    upload(api, session)
    wait_until(lambda: "retry: Retry in" in worker.read_log(), "retried placement")
    frozen_sandboxd.process.send_signal(signal.SIGCONT)

    log = wait_for(session, "file_added", "error")
    assert [e["type"] for e in log] == ["file_added"], log
    data_file = DataFile.objects.get()
    assert (data_file.placement, data_file.rows, data_file.columns) == ("ready", 2, 2)
    # The creates that timed out were answered late or never: the session has one sandbox, its own.
    session.refresh_from_db()
    assert sandboxes_of(frozen_sandboxd, session) == [session.sandbox_id]


@pytest.mark.slow
def test_a_placement_that_keeps_failing_says_so_and_its_retry_places_it(
    placing_worker, frozen_sandboxd, api, session
):
    placing_worker(tries=2)
    assert frozen_sandboxd.process is not None
    frozen_sandboxd.process.send_signal(signal.SIGSTOP)
    sent = upload(api, session)

    log = wait_for(session, "file_added", "error")
    (error,) = log
    assert error["type"] == "error" and error["payload"]["code"] == "file_not_placed"
    message = error["payload"]["message"]
    assert "sales.csv" in message and "did not answer in time" in message and "tried 2 times" in message
    data_file = DataFile.objects.get()
    assert data_file.placement == "failed" and "did not answer in time" in data_file.placement_error
    (listed,) = api.get(f"/api/sessions/{session.id}/files").json()["files"]
    retry_url = f"/api/sessions/{session.id}/files/{sent['id']}/retry"
    assert (listed["status"], listed["retry_url"]) == ("failed", retry_url)

    frozen_sandboxd.process.send_signal(signal.SIGCONT)
    retried = api.post(retry_url)
    assert retried.status_code == 202, retried.content
    assert retried.json()["file"]["status"] == "placing"
    log = wait_for(session, "file_added")
    assert [e["type"] for e in log] == ["error", "file_added"]
    data_file.refresh_from_db()
    assert (data_file.placement, data_file.placement_error, data_file.rows) == ("ready", "", 2)
    (listed,) = api.get(f"/api/sessions/{session.id}/files").json()["files"]
    assert (listed["status"], listed["error"], "retry_url" in listed) == ("ready", "", False)
