"""A kernel snapshot that would take its owner past their storage limit is not kept: sandboxd deletes
it, the session keeps its previous snapshot (a kernel that expires comes back as of then), and the
user is told in a notice. A fork of the session names that snapshot, which counts once."""

from __future__ import annotations

from pathlib import Path

from analyst.accounts import limits
from analyst.models import AnalysisSession, KernelSnapshot, UserLimits
from sandboxes import Sandbox
from tests.integration.test_resume_and_fork import run_cell
from tests.printed import printed_in_last_turn

LIMIT = 2 << 20
BIG = 24 << 20


def snapshot_files(sandboxd) -> set[Path]:
    return set((sandboxd.data_dir / "snapshots").glob("*.snapshot"))


def test_a_24_mib_variable_under_a_2_mib_limit_keeps_the_previous_state(stack, api, session, alice, sandboxd):
    UserLimits.objects.create(user=alice, stored_bytes=LIMIT)
    run_cell(api, session, "x = 41")
    (first,) = KernelSnapshot.objects.filter(session=session)
    assert 0 < first.size < LIMIT
    stored_before = snapshot_files(sandboxd)

    log = run_cell(api, session, f"import os\nbig = os.urandom({BIG})\nx = 99")
    # The old code kept it: a second snapshot of 24 MiB under a limit of 2 MiB.
    assert list(KernelSnapshot.objects.filter(session=session)) == [first]
    assert snapshot_files(sandboxd) == stored_before  # sandboxd deleted the one not kept
    notices = [e["payload"] for e in log if e["type"] == "notice"]
    assert [n.get("code") for n in notices] == ["state_not_saved"]
    text = notices[0]["text"]
    assert text.startswith("The kernel's variables and files (24 MiB) were not saved")
    assert "were not saved: they would take your files, charts and saved kernels past your 2 MiB" in text
    assert "is kept: if this kernel expires, it comes back as it was then." in text
    assert limits.stored_bytes(alice) == first.size

    response = api.post(f"/api/sessions/{session.id}/fork")
    assert response.status_code == 201, response.content
    fork = AnalysisSession.objects.get(id=response.json()["id"])
    assert KernelSnapshot.objects.get(session=fork).snapshot_id == first.snapshot_id
    assert limits.stored_bytes(alice) == first.size  # the fork's row names the same snapshot

    session.refresh_from_db()
    gone = Sandbox.connect(session.sandbox_id, url=sandboxd.url, token=sandboxd.token)
    gone.kill()  # as the TTL reaper would
    gone.close()
    log = run_cell(api, session, "print(x, 'big' in dir())")
    assert printed_in_last_turn(log) == "41 False\n"
    assert [e["type"] for e in log].count("kernel_restored") == 1
