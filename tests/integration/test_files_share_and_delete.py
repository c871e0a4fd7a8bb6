"""The files panel sees what code wrote; a share link's fork brings the kernel along; deleting a
session kills its sandbox and its snapshots."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from analyst.models import AnalysisSession, KernelSnapshot, ShareLink
from sandboxes import Sandbox, SandboxNotFound, SnapshotNotFound
from tests.integration.test_resume_and_fork import run_cell, stdout_of_last_turn


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
    assert download.status_code == 200 and download.content == b"region,total\nsouth,32\n"


def test_a_fork_through_a_share_link_has_the_kernel_state(stack, api, session):
    run_cell(api, session, "answer = 41 + 1")
    link = ShareLink.objects.create(session=session)
    bob = get_user_model().objects.create_user("bob")
    viewer = Client()
    viewer.force_login(bob)
    response = viewer.post(f"/s/{link.token}/fork")
    fork = AnalysisSession.objects.get(owner=bob)
    assert response["Location"] == f"/sessions/{fork.id}/"
    log = run_cell(viewer, fork, "print(answer)")  # the page's own way in: the login session
    assert stdout_of_last_turn(log) == "42\n"


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
