"""Kernel state outlives its sandbox: snapshots after turns, restored on the next; forks carry it."""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from django.db import connections

from analyst.kernels import kept_sandboxes
from analyst.kernels.session_kernel import SessionKernel
from analyst.models import AnalysisSession, KernelSnapshot
from analyst.realtime import events
from sandboxes import Sandbox, SnapshotNotFound
from tests.integration.conftest import wait_for
from tests.printed import printed_in_last_turn


def run_cell(api, session, code: str) -> list[dict]:
    """Run a cell through the API and wait for its turn to end; the whole log."""
    ended_before = session.events.filter(type__in=["turn_done", "turn_failed"]).count()
    response = api.post(f"/api/sessions/{session.id}/cells", {"code": code}, "application/json")
    assert response.status_code == 202, response.content
    deadline = time.monotonic() + 90
    while session.events.filter(type__in=["turn_done", "turn_failed"]).count() <= ended_before:
        assert time.monotonic() < deadline, "the cell's turn did not end"
        time.sleep(0.05)
    return events.after(session.id, 0)


def test_an_expired_kernel_comes_back_with_its_variables(stack, api, session, sandboxd):
    run_cell(api, session, "import pandas as pd\nframe = pd.DataFrame({'v': [1, 2, 3]})\nx = 41")
    snapshots = list(KernelSnapshot.objects.filter(session=session))
    assert len(snapshots) == 1 and snapshots[0].size > 0
    session.refresh_from_db()
    gone = Sandbox.connect(session.sandbox_id, url=sandboxd.url, token=sandboxd.token)
    gone.kill()  # as the TTL reaper, or a restarted sandboxd, would
    gone.close()

    log = run_cell(api, session, "print(x + 1, int(frame.v.sum()))")
    assert printed_in_last_turn(log) == "42 6\n"
    restored = [e for e in log if e["type"] == "kernel_restored"]
    assert len(restored) == 1 and restored[0]["payload"]["unsaved"] == []
    assert "restored" in restored[0]["payload"]["text"]
    assert not [e for e in log if e["type"] == "notice"]


def test_two_processes_finding_the_kernel_gone_restore_it_once(stack, api, session, sandboxd):
    """A turn and an upload's placement can find the sandbox gone together; each used to restore
    its own, and the session kept whichever saved last (the other's work was lost with it)."""
    run_cell(api, session, "x = 41")
    session.refresh_from_db()
    service = {"url": sandboxd.url, "token": sandboxd.token}
    gone = Sandbox.connect(session.sandbox_id, **service)
    gone.kill()
    gone.close()

    together = threading.Barrier(2)

    def replace_in_a_thread_of_its_own(_: int) -> tuple[str, str]:
        try:
            own = AnalysisSession.objects.get(id=session.id)
            kernel = SessionKernel(own, emit=lambda type, payload: events.append(own.id, type, payload))
            together.wait(timeout=30)
            sandbox = kernel.sandbox()
            return sandbox.sandbox_id, sandbox.run_code("x + 1").text
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = list(pool.map(replace_in_a_thread_of_its_own, range(2)))
    for sandbox_id, _ in outcomes:
        kept_sandboxes.forget(sandbox_id)  # this process's kept connection, as a worker's would be
    assert outcomes[0] == outcomes[1] and outcomes[0][1] == "42", outcomes
    session.refresh_from_db()
    assert session.sandbox_id == outcomes[0][0]
    assert session.events.filter(type="kernel_restored").count() == 1
    live = Sandbox.list({"session": str(session.id)}, **service)
    assert [s.sandbox_id for s in live] == [session.sandbox_id]


def test_unsaved_variables_are_named_when_restored(stack, api, session, sandboxd):
    run_cell(api, session, "x = 1\nnumbers = (i for i in range(3))")
    session.refresh_from_db()
    assert KernelSnapshot.objects.get(session=session).unsaved == ["numbers"]
    gone = Sandbox.connect(session.sandbox_id, url=sandboxd.url, token=sandboxd.token)
    gone.kill()
    gone.close()
    log = run_cell(api, session, "print(x)")
    restored = [e for e in log if e["type"] == "kernel_restored"][0]["payload"]
    assert restored["unsaved"] == ["numbers"] and "numbers" in restored["text"]


def test_only_the_newest_snapshots_are_kept(stack, api, session, sandboxd, settings):
    kept = settings.ANALYST_SNAPSHOTS_KEPT
    for n in range(kept + 2):
        run_cell(api, session, f"x = {n}")
    rows = list(KernelSnapshot.objects.filter(session=session).order_by("id"))
    assert len(rows) == kept
    service = {"url": sandboxd.url, "token": sandboxd.token}
    for row in rows:
        Sandbox.get_snapshot(row.snapshot_id, **service)  # still there
    assert session.events.filter(type="notice").count() == 0


def test_a_fork_has_the_transcript_files_and_kernel_state(stack, api, session, sandboxd, alice):
    api.post(
        f"/api/sessions/{session.id}/files",
        {"file": _csv("sales.csv", b"region,amount\nnorth,10\nsouth,32\n")},
    )
    wait_for(session, "file_added")
    log = run_cell(
        api,
        session,
        "import pandas as pd\ntotal = int(pd.read_csv('data/sales.csv').amount.sum())\n"
        "import matplotlib.pyplot as plt\nplt.plot([1, 2]); plt.show()",
    )
    chart = [e for e in log if e["type"] == "result" and "image/png" in e["payload"]["artifacts"]]
    assert chart

    response = api.post(f"/api/sessions/{session.id}/fork")
    assert response.status_code == 201, response.content
    fork = AnalysisSession.objects.get(id=response.json()["id"])
    assert fork.owner == alice and fork.title.endswith("(fork)")
    (original_file,), (forked_file,) = session.files.all(), fork.files.all()
    assert forked_file.description == original_file.description and forked_file.description["tables"]
    assert forked_file.summary == original_file.summary
    fork_log = [e for e in api.get(f"/api/sessions/{fork.id}/events").json()["events"]]
    assert [e["type"] for e in fork_log[:-1]] == [e["type"] for e in log]
    assert fork_log[-1]["type"] == "forked" and fork_log[-1]["payload"]["kernel_state"] is True
    fork_chart = next(e for e in fork_log if e["type"] == "result" and e["payload"]["artifacts"])
    ref = fork_chart["payload"]["artifacts"]["image/png"]
    assert ref["id"] != chart[0]["payload"]["artifacts"]["image/png"]["id"]
    download = api.get(ref["url"])
    assert download.status_code == 200
    assert b"".join(download.streaming_content).startswith(b"\x89PNG")
    download.close()

    fork_out = run_cell(api, fork, "print(total)\nimport os; print(sorted(os.listdir('data')))")
    assert printed_in_last_turn(fork_out) == "42\n['sales.csv']\n"
    assert [e["type"] for e in fork_out].count("kernel_restored") == 1

    run_cell(api, fork, "total = 0")  # independent from now on
    original = run_cell(api, session, "print(total)")
    assert printed_in_last_turn(original) == "42\n"


def test_a_fork_without_saved_state_says_it_starts_fresh(stack, api, session):
    response = api.post(f"/api/sessions/{session.id}/fork")
    fork_log = api.get(f"/api/sessions/{response.json()['id']}/events").json()["events"]
    assert fork_log[-1]["type"] == "forked"
    forked = fork_log[-1]["payload"]
    assert forked["kernel_state"] is False and "fresh kernel" in forked["text"]


def test_another_users_session_cannot_be_forked(stack, session, django_user_model, client):
    stranger = django_user_model.objects.create_user("mallory", password="pw")
    client.force_login(stranger)
    response = client.post(f"/api/sessions/{session.id}/fork")
    assert response.status_code == 404
    assert not AnalysisSession.objects.filter(owner=stranger).exists()


def test_a_snapshot_deleted_from_sandboxd_falls_back_to_a_fresh_kernel(stack, api, session, sandboxd):
    run_cell(api, session, "x = 1")
    session.refresh_from_db()
    service = {"url": sandboxd.url, "token": sandboxd.token}
    Sandbox.delete_snapshot(KernelSnapshot.objects.get(session=session).snapshot_id, **service)
    gone = Sandbox.connect(session.sandbox_id, **service)
    gone.kill()
    gone.close()
    log = run_cell(api, session, "print('still works')")
    assert printed_in_last_turn(log) == "still works\n"
    notices = [e["payload"]["text"] for e in log if e["type"] == "notice"]
    assert len(notices) == 1 and "could not be restored" in notices[0]
    assert json.dumps(notices).count("fresh") == 1
    try:
        Sandbox.get_snapshot("0" * 32, **service)
    except SnapshotNotFound:
        pass


def _csv(name: str, content: bytes):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, content, content_type="text/csv")
