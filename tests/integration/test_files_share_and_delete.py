"""The files panel sees what code wrote; a share link's fork brings the kernel along; deleting a
session kills its sandbox and its snapshots."""

from __future__ import annotations

import hashlib
import tracemalloc

import pytest
from asgiref.sync import async_to_sync
from asgiref.testing import ApplicationCommunicator
from django.contrib.auth import get_user_model
from django.test import Client

from analyst.models import AnalysisSession, ApiToken, KernelSnapshot, ShareLink
from config.asgi import application
from sandboxes import Sandbox, SandboxNotFound, SnapshotNotFound
from tests.integration.conftest import wait_for
from tests.integration.test_resume_and_fork import _csv, run_cell
from tests.printed import printed_in_last_turn


def test_files_the_code_writes_are_listed_and_download(stack, api, session):
    run_cell(
        api,
        session,
        "import os\nos.makedirs('outputs', exist_ok=True)\n"
        "open('outputs/report.csv', 'w').write('region,total\\nsouth,32\\n')",
    )
    listing = api.get(f"/api/sessions/{session.id}/files").json()["files"]
    report = next(f for f in listing if f["path"] == "outputs/report.csv")
    assert report["kind"] == "output" and report["size"] == len("region,total\nsouth,32\n")
    assert not [f for f in listing if f["path"].startswith(".")], "hidden state is not listed"
    download = api.get(report["download_url"])
    assert download.status_code == 200
    assert b"".join(download) == b"region,total\nsouth,32\n"  # (the test client collects it)


def test_a_large_output_is_streamed_not_held_whole(stack, api, session):
    """Over ASGI, as the web server serves it, a 16 MiB file passes through in pieces: at no moment does
    the web process hold anything near the whole file."""
    size = 16 << 20
    run_cell(api, session, f"open('big.bin', 'wb').write(bytes(range(256)) * {size // 256})")
    _, secret = ApiToken.issue(session.owner)
    path = f"/api/sessions/{session.id}/files/download"
    tracemalloc.start()
    try:
        status, received, digest = async_to_sync(asgi_get)(path, "path=big.bin", secret)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert status == 200 and received == size
    assert digest == hashlib.sha256(bytes(range(256)) * (size // 256)).hexdigest()
    assert peak < size // 4, f"{peak / 2**20:.1f} MiB held at once"


async def asgi_get(path: str, query: str, token: str) -> tuple[int, int, str]:
    """GET through the project's ASGI application: the status, the body's length and SHA-256
    (summed as it arrives, so the test itself holds none of it)."""
    scope = {
        "type": "http",
        "method": "GET",
        "path": path,
        "query_string": query.encode(),
        "headers": [(b"authorization", f"Bearer {token}".encode()), (b"host", b"testserver")],
    }
    communicator = ApplicationCommunicator(application, scope)
    await communicator.send_input({"type": "http.request", "body": b"", "more_body": False})
    start = await communicator.receive_output(timeout=30)
    received, digest = 0, hashlib.sha256()
    while True:
        message = await communicator.receive_output(timeout=30)
        body = message.get("body", b"")
        received += len(body)
        digest.update(body)
        if not message.get("more_body"):
            break
    await communicator.wait()
    return start["status"], received, digest.hexdigest()


def test_a_fork_through_a_share_link_has_the_kernel_state(stack, api, session):
    run_cell(api, session, "answer = 41 + 1")
    link = ShareLink.objects.create(session=session, allow_fork_state=True)
    bob = get_user_model().objects.create_user("bob")
    viewer = Client()
    viewer.force_login(bob)
    response = viewer.post(f"/s/{link.token}/fork")
    fork = AnalysisSession.objects.get(owner=bob)
    assert response["Location"] == f"/sessions/{fork.id}/"
    log = run_cell(viewer, fork, "print(answer)")  # the page's own way in: the login session
    assert printed_in_last_turn(log) == "42\n"
    assert any(e["type"] == "notice" and "someone else's session" in e["payload"]["text"] for e in log)


def test_a_fork_through_a_link_without_the_state_starts_a_fresh_kernel(stack, api, session):
    api.post(f"/api/sessions/{session.id}/files", {"file": _csv("sales.csv", b"region,amount\nnorth,10\n")})
    wait_for(session, "file_added")
    run_cell(api, session, "answer = 41 + 1")
    link = ShareLink.objects.create(session=session)
    bob = get_user_model().objects.create_user("bob")
    viewer = Client()
    viewer.force_login(bob)
    viewer.post(f"/s/{link.token}/fork")
    fork = AnalysisSession.objects.get(owner=bob)
    assert not KernelSnapshot.objects.filter(session=fork).exists()
    code = "import os\nprint('answer' in dir(), os.path.exists('data/sales.csv'))"
    assert printed_in_last_turn(run_cell(viewer, fork, code)) == "False False\n"


def test_deleting_a_session_kills_its_sandbox_and_snapshots(stack, api, session, sandboxd):
    run_cell(api, session, "x = 1")
    session.refresh_from_db()
    snapshot_id = KernelSnapshot.objects.get(session=session).snapshot_id
    service = {"url": sandboxd.url, "token": sandboxd.token}
    assert api.delete(f"/api/sessions/{session.id}").status_code == 200
    with pytest.raises(SandboxNotFound):
        Sandbox.connect(session.sandbox_id, **service)
    with pytest.raises(SnapshotNotFound):
        Sandbox.get_snapshot(snapshot_id, **service)
