"""A download whose file vanishes between the listing and the read ends cleanly: a 404 JSON when
it is gone before the answer starts, and a response that ends (never one that hangs) when it goes
mid-stream. Raced against the real web server and sandboxd, 200 headers were sent and then the
connection hung in 5 of 60 downloads."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile

from analyst.models import AnalysisSession, ApiToken, DataFile
from sandboxes import Sandbox, SandboxError
from tests.api.conftest import server_env
from tests.web_process import web_server

CONTENT = b"region,total\nsouth,32\n" * 20_000  # 440 kB: a few chunks


@pytest.fixture
def served(
    transactional_db: None, sandboxd: Any, make_sandbox: Any, tmp_path: Any
) -> Iterator[dict[str, Any]]:
    sandbox: Sandbox = make_sandbox()
    alice = get_user_model().objects.create_user("alice")
    _, token = ApiToken.issue(alice)
    session = AnalysisSession.objects.create(
        owner=alice, model="anthropic/claude-test", sandbox_id=sandbox.sandbox_id
    )
    env = server_env(
        MEDIA_ROOT=str(tmp_path / "media"), SANDBOXD_URL=sandboxd.url, SANDBOXD_TOKEN=sandboxd.token
    )
    with web_server(env, name="vanishing-download") as url:
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=15) as client:
            yield {"client": client, "session": session, "sandbox": sandbox}


def test_a_file_deleted_after_the_listing_is_a_json_404(served):
    client, session, sandbox = served["client"], served["session"], served["sandbox"]
    sandbox.files.write("outputs/report.csv", CONTENT)
    listing = client.get(f"/api/sessions/{session.id}/files").json()["files"]
    report = next(f for f in listing if f["path"] == "outputs/report.csv")
    folder = client.get(f"/api/sessions/{session.id}/files/download", params={"path": "outputs"})
    assert folder.status_code == 404  # a folder is not a file to download
    sandbox.files.remove("outputs/report.csv")
    response = client.get(report["download_url"])
    assert response.status_code == 404 and response.headers["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == "not_found"


def test_an_upload_whose_stored_copy_is_gone_is_a_json_404(api, session, media):
    """With no sandbox running, an upload downloads from our copy: gone from disk, it is a 404."""
    upload = DataFile(session=session, name="q3.csv", path="data/q3.csv", size=4)
    upload.stored.save("q3.csv", ContentFile(b"a\n1\n"))
    url = f"/api/sessions/{session.id}/files/download?path=data/q3.csv"
    whole = api.get(url)
    assert whole.status_code == 200 and b"".join(whole) == b"a\n1\n"  # (the test client collects it)
    Path(upload.stored.path).unlink()
    response = api.get(url)
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


def test_raced_downloads_each_end_whole_or_as_a_404(served):
    """While the file is written and removed over and over, every download ends within the client's
    timeout (a hung one raises ReadTimeout), and each is the whole file with a 200 or a 404 JSON:
    never 200 headers and then a broken body (it was, 3 times in 20)."""
    client, session, sandbox = served["client"], served["session"], served["sandbox"]
    stop = threading.Event()

    def churn() -> None:
        while not stop.is_set():
            try:
                sandbox.files.write("race.csv", CONTENT)  # whole, then renamed into place
                sandbox.files.remove("race.csv")
            except SandboxError:
                pass

    racer = threading.Thread(target=churn, daemon=True)
    racer.start()
    outcomes, url = [], f"/api/sessions/{session.id}/files/download"
    try:
        for _ in range(20):
            try:
                response = client.get(url, params={"path": "race.csv"})
            except httpx.RemoteProtocolError:
                outcomes.append("broken")
                continue
            if response.status_code == 200:
                outcomes.append("whole" if response.content == CONTENT else "short")
            else:
                assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
                outcomes.append("404")
    finally:
        stop.set()
        racer.join()
    assert set(outcomes) <= {"whole", "404"}, outcomes
